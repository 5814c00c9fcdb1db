package edge

import (
	"net/url"
	"strings"

	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// OwnFile recognizes an address of the server's own files given as an
// image source: http or https, a host the server answers to (a loopback
// name or address, an IP address, the public URL's host, an allowed host;
// any port, since a container's mapped port is not the one it listens on),
// a path below /files/ that names a file with its token. Its query (an
// expiry and signature) is not read: the file is read from the state, as
// the service reads its own CDN.
func (env *Env) OwnFile(src string) (sim.FileRef, bool) {
	if !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://") {
		return sim.FileRef{}, false
	}
	u, err := url.Parse(src)
	if err != nil || u.User != nil || u.Host == "" || !strings.HasPrefix(u.Path, wire.FilesPath) || !env.hostAllowed(u.Host) {
		return sim.FileRef{}, false
	}
	return env.Eng.ParseFileRef(strings.TrimPrefix(u.Path, wire.FilesPath))
}

// IsOwnFile reports whether src is an address of the server's own files.
func (env *Env) IsOwnFile(src string) bool {
	_, ok := env.OwnFile(src)
	return ok
}
