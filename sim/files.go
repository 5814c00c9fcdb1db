package sim

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/media"
)

// File classes: what a file belongs to.
const (
	FileAsset      = "a" // an asset's file
	FileCharacter  = "c" // a character's portrait
	FileStartFrame = "e" // an Encore creation's start frame
)

// FileRef names a file: its class, workspace, owner id and a token derived
// from the seed (or, with a file secret, from the secret alone). It is the
// path of the file's URL.
type FileRef struct {
	Class string
	WS    uint64
	ID    uint64
	Token string
	Ext   string
}

// Path is the ref as a URL path below /files/.
func (f FileRef) Path() string {
	return fmt.Sprintf("%s/%d/%d/%s%s", f.Class, f.WS, f.ID, f.Token, f.Ext)
}

// fileRef names a file. The token changes with every reset and restore
// (the epoch), so an address never serves two different contents within
// one state file.
//
// Tokens are predictable from the seed (same seed, same addresses) unless
// Config.FileSecret is set: then they are an HMAC keyed by the secret.
func (e *Engine) fileRef(class string, ws, id uint64, mime string) FileRef {
	purpose := fmt.Sprintf("file/%s/%d", class, e.epoch.Load())
	return FileRef{Class: class, WS: ws, ID: id, Token: e.fileToken(purpose, id), Ext: media.Extension(mime)}
}

// AssetFile is the file reference of an asset.
func (e *Engine) AssetFile(a Asset) FileRef {
	return e.fileRef(FileAsset, a.WorkspaceID, a.ID, a.MimeType)
}

// CharacterFile is the portrait of a character.
func (e *Engine) CharacterFile(c Character) FileRef {
	return e.fileRef(FileCharacter, c.WorkspaceID, c.ID, "image/jpeg")
}

// StartFrameFile is the start frame of an Encore creation.
func (e *Engine) StartFrameFile(c EncoreCreation) FileRef {
	return e.fileRef(FileStartFrame, c.WorkspaceID, c.ID, "image/jpeg")
}

// ParseFileRef reads class/ws/id/token.ext; it checks the token. Numbers
// are read in their one spelling (no leading zero, no sign): another
// spelling of an address is no address.
func (e *Engine) ParseFileRef(path string) (FileRef, bool) {
	parts := strings.Split(path, "/")
	if len(parts) != 4 {
		return FileRef{}, false
	}
	ws, err1 := strconv.ParseUint(parts[1], 10, 64)
	id, err2 := strconv.ParseUint(parts[2], 10, 64)
	if err1 != nil || err2 != nil || strconv.FormatUint(ws, 10) != parts[1] || strconv.FormatUint(id, 10) != parts[2] {
		return FileRef{}, false
	}
	token, ext, _ := strings.Cut(parts[3], ".")
	want := e.fileRef(parts[0], ws, id, "")
	if token != want.Token || (parts[0] != FileAsset && parts[0] != FileCharacter && parts[0] != FileStartFrame) {
		return FileRef{}, false
	}
	want.Ext = ""
	if ext != "" {
		want.Ext = "." + ext
	}
	return want, true
}

// StoredFile describes a file.
type StoredFile struct {
	MimeType string
	Name     string // a file name for downloads
	Modified Stamp
	Size     int64
}

var errNoFile = &Error{Kind: ENOTFOUND, Code: "not_found", Message: "No such file."}

// OpenFile describes the file behind a file URL and returns a reader of its
// bytes. Generated media is made on first request and stored, so every
// later request serves the same bytes. The reader copies out of the state
// file only what is read: a byte range costs its length, not the file's.
func (e *Engine) OpenFile(ref FileRef) (StoredFile, io.ReadSeeker, error) {
	fk := key(ref.Class, ref.WS, ref.ID)
	var out StoredFile
	var spec *media.Spec
	err := e.view(func(t *tx) error {
		var err error
		out, spec, err = t.fileSource(ref)
		if err != nil {
			return err
		}
		out.Size = int64(len(t.b(bFiles).Get(fk)))
		return nil
	})
	if err != nil {
		return StoredFile{}, nil, err
	}
	if out.Size == 0 {
		if spec == nil {
			return StoredFile{}, nil, errNoFile
		}
		data, err := media.Generate(*spec)
		if err != nil {
			return StoredFile{}, nil, fmt.Errorf("generate %s: %w", ref.Path(), err)
		}
		err = e.update(func(t *tx) error {
			if existing := t.b(bFiles).Get(fk); existing != nil {
				out.Size = int64(len(existing)) // generated meanwhile by another request
				return nil
			}
			out.Size = int64(len(data))
			return t.b(bFiles).Put(fk, data)
		})
		if err != nil {
			return StoredFile{}, nil, err
		}
	}
	return out, &fileReader{e: e, key: fk, size: out.Size}, nil
}

// fileReader reads a stored file in pieces, each in its own read
// transaction (bytes from bbolt are valid only inside one).
type fileReader struct {
	e    *Engine
	key  []byte
	size int64
	off  int64
}

func (r *fileReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	var n int
	err := r.e.read(func(btx *bolt.Tx) error {
		data := btx.Bucket(bFiles).Get(r.key)
		if int64(len(data)) != r.size {
			return errors.New("the file changed while it was read")
		}
		n = copy(p, data[r.off:])
		return nil
	})
	r.off += int64(n)
	return n, err
}

func (r *fileReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.size
	default:
		return 0, errors.New("seek: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("seek: negative position")
	}
	r.off = offset
	return offset, nil
}

// fileSource finds what a file belongs to and, for generated media, how to
// make it.
func (t *tx) fileSource(ref FileRef) (StoredFile, *media.Spec, error) {
	seed := DeriveSeed(t.e.seed, "media/"+ref.Class, ref.ID)
	switch ref.Class {
	case FileAsset:
		a, err := t.asset(ref.WS, ref.ID)
		if err != nil || a.Status != StatusCompleted || ref.Ext != media.Extension(a.MimeType) {
			return StoredFile{}, nil, errNoFile
		}
		f := StoredFile{MimeType: a.MimeType, Name: fmt.Sprintf("asset-%d%s", a.ID, ref.Ext), Modified: a.CreatedAt}
		spec := &media.Spec{MimeType: a.MimeType, Width: a.Width, Height: a.Height, DurationSeconds: a.DurationSeconds,
			Seed: seed, Prompt: a.Prompt + a.Title, Voice: spoken(a.Kind), Label: assetLabel(*a)}
		if a.Media != nil {
			spec.Audio = a.Media.Audio
		}
		return f, spec, nil
	case FileCharacter:
		var c Character
		ok, err := getJSON(t.b(bCharacters), key(ref.WS, ref.ID), &c)
		if err != nil || !ok || c.Status != "ready" || ref.Ext != ".jpg" {
			return StoredFile{}, nil, errNoFile
		}
		return StoredFile{MimeType: "image/jpeg", Name: fmt.Sprintf("character-%d.jpg", c.ID), Modified: c.CreatedAt},
			&media.Spec{MimeType: "image/jpeg", Width: 1024, Height: 1280, Seed: seed, Prompt: c.Name + " " + c.Description,
				Label: media.Label{ID: fmt.Sprintf("character %d", c.ID), Model: c.Name, Text: c.Description}}, nil
	case FileStartFrame:
		c, err := t.encore(ref.WS, ref.ID)
		if err != nil || ref.Ext != ".jpg" {
			return StoredFile{}, nil, errNoFile
		}
		return StoredFile{MimeType: "image/jpeg", Name: fmt.Sprintf("encore-%d-start.jpg", c.ID), Modified: c.CreatedAt},
			&media.Spec{MimeType: "image/jpeg", Width: encoreWidth, Height: encoreHeight, Seed: seed, Prompt: c.Effect + " " + c.Source,
				Label: media.Label{ID: fmt.Sprintf("encore %d start frame", c.ID), Model: c.Effect, Text: "from " + c.Source}}, nil
	}
	return StoredFile{}, nil, errNoFile
}

// assetLabel is what an asset's file says it is: its id, its model and
// its prompt (or title).
func assetLabel(a Asset) media.Label {
	text := a.Prompt
	if text == "" {
		text = a.Title
	}
	return media.Label{ID: fmt.Sprintf("asset %d", a.ID), Model: a.Model, Text: text}
}

// Preview kinds: what AssetPreview draws.
const (
	PreviewPoster   = "poster"   // a video's first frame, JPEG
	PreviewWaveform = "waveform" // an audio file's waveform, PNG
	PreviewModel    = "model"    // a 3D model seen from a fixed camera, PNG
)

// AssetPreview draws a picture of a completed asset's file, for the
// dashboard (the API has no such thing): the poster of a video, the
// waveform of an audio file, a view of a 3D model. It returns the kind,
// the media type and the bytes; images have none (they are their own
// picture) and get a not-found error. The waveform reads the stored
// audio file (made on first request, like a download).
func (e *Engine) AssetPreview(ws, id uint64) (kind, mime string, data []byte, err error) {
	var a *Asset
	err = e.view(func(t *tx) error {
		var err error
		a, err = t.asset(ws, id)
		return err
	})
	if err != nil || a == nil || a.Status != StatusCompleted {
		return "", "", nil, errNoFile
	}
	ref := e.AssetFile(*a)
	var spec *media.Spec
	if err := e.view(func(t *tx) error {
		var err error
		_, spec, err = t.fileSource(ref)
		return err
	}); err != nil || spec == nil {
		return "", "", nil, errNoFile
	}
	switch media.Extension(a.MimeType) {
	case ".mp4":
		data, err = media.Poster(*spec)
		return PreviewPoster, "image/jpeg", data, err
	case ".glb":
		data, err = media.ModelPreview(*spec)
		return PreviewModel, "image/png", data, err
	case ".wav":
		_, r, err := e.OpenFile(ref)
		if err != nil {
			return "", "", nil, err
		}
		wav, err := io.ReadAll(r)
		if err != nil {
			return "", "", nil, err
		}
		data, err = media.Waveform(wav, spec.Label)
		return PreviewWaveform, "image/png", data, err
	}
	return "", "", nil, errNoFile
}

// putFile stores bytes for a file (uploads, start frames).
func (t *tx) putFile(class string, ws, id uint64, data []byte) error {
	return t.b(bFiles).Put(key(class, ws, id), data)
}

// spoken reports whether assets of the kind are speech (a voice-over),
// which their audio is made to sound like.
func spoken(kind string) bool {
	k, _ := fixtures.KindNamed(kind)
	return k.Length == fixtures.LengthSpoken
}
