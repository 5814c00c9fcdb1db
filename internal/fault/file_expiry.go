package fault

import (
	"time"

	"github.com/mediamock/mediamock/internal/problem"
)

// FileExpiry makes file URLs older than ttl_seconds answer 403 (or 404).
const FileExpiry = "file_expiry"

// MaxTTLSeconds bounds how long a file address lives.
const MaxTTLSeconds = 366 * 86400

func init() { Register(FileExpiry, new(fileExpiry)) }

type fileExpiry struct {
	TTLSeconds    *int64 `json:"ttl_seconds,omitempty"`
	ExpiredStatus int    `json:"expired_status,omitempty"`
}

func (k *fileExpiry) Params() []*Param {
	return []*Param{
		Field(&k.TTLSeconds, "TTL seconds", "how long a file address lives, on the simulated clock.").Min(0).Max(MaxTTLSeconds).Required(),
		Field(&k.ExpiredStatus, "Expired status", "403 `file_url_expired` (default) or 404 `not_found`.").Enum(403, 404).Default(403),
	}
}

func (*fileExpiry) About() About {
	return About{Stage: Access, Strikes: []string{Files}, Targets: []string{TargetModality},
		Doc: "file addresses expire `ttl_seconds` on the simulated clock after they are handed out (a file read by an address without an expiry: after the file was made), " +
			"then answer 403 `file_url_expired` (or 404); while the rule stands, file addresses carry `expires` and `signature`.",
		Meets: "file addresses carry `expires` and `signature` and answer 403 `file_url_expired` (or 404) `ttl_seconds` after they were handed out, on the simulated clock"}
}

func (k *fileExpiry) ttl() time.Duration { return time.Duration(*k.TTLSeconds) * time.Second }

// Expiry is when an address handed out at now expires.
func (k *fileExpiry) Expiry(now time.Time) (time.Time, bool) { return now.Add(k.ttl()), true }

// Access answers a file whose address expired: at the expiry it carries,
// if its signature holds, else ttl_seconds after the file was made.
func (k *fileExpiry) Access(f FileRequest) (struck bool, err error) {
	expires := f.Made().Add(k.ttl())
	if at, carried, valid := f.Expiry(); carried {
		if !valid {
			return true, &problem.Error{Kind: problem.EFORBIDDEN, Code: "invalid_signature",
				Message: "The file address's expiry or signature was changed; read the asset again for a fresh address."}
		}
		expires = at
	}
	if !f.Now().After(expires) {
		return false, nil
	}
	if k.ExpiredStatus == 404 {
		return true, &problem.Error{Kind: problem.ENOTFOUND, Code: "not_found", Message: "No such file."}
	}
	at := expires.UTC().Format(timeLayout)
	return true, &problem.Error{Kind: problem.EFORBIDDEN, Code: "file_url_expired",
		Message: "This file address expired at " + at + "; read the asset again for a fresh address.",
		Details: map[string]any{"expired_at": at}}
}

// timeLayout is the API's timestamps' (sim.TimeLayout: the engine imports
// this package in its tests, so this one cannot import it).
const timeLayout = "2006-01-02T15:04:05-07:00"
