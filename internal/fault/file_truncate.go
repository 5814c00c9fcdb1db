package fault

import "github.com/mediamock/mediamock/internal/seed"

// FileTruncate breaks a file's first whole download like Truncate; a
// request with Range is served.
const FileTruncate = "file_truncate"

// maxBroken caps the files a rule remembers having broken.
const maxBroken = 4096

func init() { Register(FileTruncate, new(fileTruncate)) }

type fileTruncate struct {
	Cut
	broken map[string]bool // the files whose first download the rule broke
}

func (*fileTruncate) About() About {
	return About{Stage: Deliver, Strikes: []string{Files}, Targets: []string{TargetModality, TargetProbability, TargetFirst}, Breaks: true,
		Doc:   "a file's first whole download breaks like `" + Truncate + "`; a request with `Range` is served whole, so a client resumes.",
		Meets: "a file's first whole download breaks; a `Range` request is served, so a client resumes"}
}

// Targets is a whole download of a file the rule has not broken yet.
func (k *fileTruncate) Targets(r Request) bool { return !r.Ranged && !k.broken[r.Path] }

// Struck remembers the file.
func (k *fileTruncate) Struck(r Request) {
	if k.broken == nil || len(k.broken) >= maxBroken {
		k.broken = map[string]bool{}
	}
	k.broken[r.Path] = true
}

// Deliver sends the head and the body up to the cut, then closes.
func (k *fileTruncate) Deliver(d Delivery, _ *seed.RNG) {
	d.Cut(k.At(int64(len(d.Body()))))
	d.Close()
}
