package sim

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// Secrets are random; everything else is seeded. The seed makes ids,
// content and the seeded world the same on every run; a credential made
// from it could be computed by anyone who knows (or works out) the seed. So
// every credential the engine makes up (the keys and control tokens of
// sandboxes, the tokens of workspaces and keys added at run time, the OAuth
// access tokens) comes from crypto/rand and is kept in the state file, which
// a restart reads back. The key that signs expiring file addresses is a
// random one kept in the state too, or, with Config.FileSecret, derived
// from that secret by HMAC; the tokens of file addresses are derived from
// the seed alone (same seed, same addresses) unless Config.FileSecret is
// set, and then by HMAC from the secret, never from the seed.

// secretBytes is the strength of a credential: 128 random bits.
const secretBytes = 16

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("sim: crypto/rand: %v", err)) // it does not fail on supported systems
	}
	return hex.EncodeToString(b)
}

// keySignKey is, in bMeta, the random key that signs expiring file
// addresses (when no file secret is configured).
var keySignKey = []byte("file_sign_key")

// secretKey derives a key of purpose from the configured file secret.
func secretKey(secret, purpose string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("mediamock/" + purpose))
	return m.Sum(nil)
}

// FileSignKey is the key that signs expiring file addresses: derived from
// Config.FileSecret, else a random key of this state file.
func (e *Engine) FileSignKey() []byte {
	return *e.signKey.Load()
}

// loadSignKey adopts the state's signing key, if it has one and no file
// secret is configured.
func (e *Engine) loadSignKey(meta []byte) {
	if e.cfg.FileSecret != "" {
		return
	}
	if len(meta) == 32 {
		k := append([]byte(nil), meta...)
		e.signKey.Store(&k)
	}
}

// initSecrets sets the keys that do not come from the state.
func (e *Engine) initSecrets() {
	if e.cfg.FileSecret != "" {
		e.fileKey = secretKey(e.cfg.FileSecret, "file-address")
		k := secretKey(e.cfg.FileSecret, "file-expiry")
		e.signKey.Store(&k)
		return
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		panic(fmt.Sprintf("sim: crypto/rand: %v", err))
	}
	e.signKey.Store(&k)
}

// keepSignKey writes the random signing key into the state when the state
// lacks it (a new, reset or restored file). Requires a write transaction.
func (t *tx) keepSignKey() error {
	if t.e.cfg.FileSecret != "" || t.b(bMeta).Get(keySignKey) != nil {
		return nil
	}
	return t.b(bMeta).Put(keySignKey, t.e.FileSignKey())
}

// fileToken is the token of a file address: seeded, or by HMAC from the
// file secret when one is configured.
func (e *Engine) fileToken(purpose string, id uint64) string {
	if e.fileKey == nil {
		return fmt.Sprintf("%016x", DeriveSeed(e.seed, purpose, id))
	}
	m := hmac.New(sha256.New, e.fileKey)
	m.Write([]byte(purpose))
	m.Write(binary.BigEndian.AppendUint64(nil, id))
	return hex.EncodeToString(m.Sum(nil)[:8])
}
