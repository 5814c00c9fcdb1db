package edge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/sim"
)

// signFile is the query of a file's address while file URLs expire: when
// it expires (on the simulated clock, ttl_seconds from now) and a
// signature of that, so that a client cannot move it.
func (env *Env) signFile(ref sim.FileRef) string {
	h := env.Rules.Find(ref.WS, fault.Access, fault.Request{Class: fault.Files, Modality: fault.ModalityOf(mimeOfExt(ref.Ext))})
	if h == nil {
		return ""
	}
	at, ok := h.Expiry(env.Eng.Clock().Now())
	if !ok {
		return ""
	}
	expires := at.Unix()
	return "?expires=" + strconv.FormatInt(expires, 10) + "&signature=" + env.fileSignature(ref, expires)
}

// fileSignature is an HMAC of the address and its expiry, keyed by the
// engine's signing key (random, or from --file-secret; never the seed).
func (env *Env) fileSignature(ref sim.FileRef, expires int64) string {
	m := hmac.New(sha256.New, env.Eng.FileSignKey())
	m.Write([]byte("file-expiry/" + ref.Path() + "?" + strconv.FormatInt(expires, 10)))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// mimeOfExt is the media type of a file extension, for the modality of a
// file address.
func mimeOfExt(ext string) string {
	switch ext {
	case ".png", ".jpg", ".jpeg", ".webp", ".gif":
		return "image/"
	case ".mp4", ".webm", ".mov":
		return "video/"
	case ".mp3", ".wav", ".ogg", ".m4a":
		return "audio/"
	case ".glb", ".gltf", ".obj":
		return "model/"
	}
	return ""
}

// FileAccess is the access stage of a file's download: the access-stage
// rule of its scope (or its own Mock-Fault header). The error to answer
// with, if the rule's kind refuses the file (an expired address); the rule
// counts every download it targets, and those it struck; a struck one is
// met.
func (w *Writer) FileAccess(ref sim.FileRef, made time.Time) error {
	var h *fault.Hit
	if hd := w.faults.header; hd != nil && hd.Stage() == fault.Access {
		h = hd
	} else {
		h = w.env.Rules.Find(ref.WS, fault.Access, fault.Request{Class: fault.Files, Modality: w.faults.modality})
	}
	if h == nil {
		return nil
	}
	struck, err := h.Access(fileRequest{w: w, ref: ref, made: made})
	if h.Rule != fault.HeaderRule {
		w.env.Rules.Count(ref.WS, h.Rule, struck)
	}
	if struck {
		w.met(h)
	}
	return err
}

// fileRequest is a file request, as a kind of the access stage judges it.
type fileRequest struct {
	w    *Writer
	ref  sim.FileRef
	made time.Time
}

func (f fileRequest) Now() time.Time  { return f.w.env.Eng.Clock().Now() }
func (f fileRequest) Made() time.Time { return f.made }

// Expiry is the expiry the address carries, held by its signature.
func (f fileRequest) Expiry() (at time.Time, carried, valid bool) {
	q := f.w.req.URL.Query()
	e := q.Get("expires")
	if e == "" {
		return time.Time{}, false, false
	}
	n, err := strconv.ParseInt(e, 10, 64)
	if err != nil || !hmac.Equal([]byte(q.Get("signature")), []byte(f.w.env.fileSignature(f.ref, n))) {
		return time.Time{}, true, false
	}
	return time.Unix(n, 0), true, true
}
