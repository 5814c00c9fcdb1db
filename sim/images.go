package sim

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mediamock/mediamock/media"
)

// Image is a photo the service was given by address: its bytes and what its
// header says.
type Image struct {
	Data     []byte
	MimeType string
	Width    int
	Height   int
}

// ImageResolver fetches the image an https URL points to. The engine decodes
// data URIs itself; only https URLs reach the resolver. It returns an *Error
// (image_unavailable, unsupported_image_type, ...) when the URL cannot be used.
type ImageResolver interface {
	Resolve(ctx context.Context, url string) (Image, error)
}

// MaxImageBytes is the largest image the service accepts: 10 MiB.
const MaxImageBytes = 10 << 20

// imageDescriber is a resolver that knows what an image is without making
// its bytes (used when only the type and size matter).
type imageDescriber interface {
	Describe(url string) Image
}

// OfflineImages resolves every https URL to a deterministic placeholder
// photo, 1536x2048 JPEG, derived from the URL: the mock never reaches the
// network unless told to.
type OfflineImages struct{ Seed uint64 }

const placeholderWidth, placeholderHeight = 1536, 2048

// Resolve returns the placeholder of url.
func (o OfflineImages) Resolve(_ context.Context, url string) (Image, error) {
	data, err := media.Generate(media.Spec{MimeType: "image/jpeg", Width: placeholderWidth, Height: placeholderHeight, Seed: DeriveSeed(o.Seed, "url", 0), Prompt: url,
		Label: media.Label{ID: "image_url placeholder", Text: url}})
	if err != nil {
		return Image{}, err
	}
	return Image{Data: data, MimeType: "image/jpeg", Width: placeholderWidth, Height: placeholderHeight}, nil
}

// Describe says what the placeholder of url is, without drawing it.
func (o OfflineImages) Describe(string) Image {
	return Image{MimeType: "image/jpeg", Width: placeholderWidth, Height: placeholderHeight}
}

// resolveImage turns an image_url (https or data URI, or an address of the
// server's own files) into an image for workspace ws, checked from its
// bytes: type from the magic numbers, size from the header. When the bytes
// are not needed, a resolver that can describe the image is not asked to
// make it.
func (e *Engine) resolveImage(ctx context.Context, ws uint64, src string, needBytes bool) (Image, error) {
	if own := e.ownFiles.Load(); own != nil {
		if ref, ok := (*own)(src); ok {
			return e.ownImage(ws, ref, src)
		}
	}
	var img Image
	switch {
	case strings.HasPrefix(src, "data:"):
		data, err := decodeDataURI(src)
		if err != nil {
			return Image{}, err
		}
		img.Data = data
	case strings.HasPrefix(src, "https://"):
		if d, ok := e.images.(imageDescriber); ok && !needBytes {
			return d.Describe(src), nil
		}
		var err error
		if img, err = e.images.Resolve(ctx, src); err != nil {
			return Image{}, err
		}
	default:
		return Image{}, &Error{Kind: EINVALID, Code: "invalid_image_url", Message: "An image address must be an https URL or a data URI."}
	}
	return checkImage(img.Data)
}

// SetOwnFiles tells the engine how to recognize the addresses of the
// server's own files (those the fronts hand out): such an address given as
// an image source is read from the state, never fetched. own returns the
// file an address names, or false when it is not one of the server's.
func (e *Engine) SetOwnFiles(own func(src string) (FileRef, bool)) {
	if own == nil {
		e.ownFiles.Store(nil)
		return
	}
	e.ownFiles.Store(&own)
}

// ownImage reads one of the server's own files as an image source, with
// the checks of any other image. A file of another workspace is refused as
// the service refuses an address it cannot fetch (a private one): the
// mock's files are public by address, but a workspace's files are not
// another's to build on. A file that does not exist (an asset not yet
// completed, deleted, an address from another state file) cannot be
// fetched either.
func (e *Engine) ownImage(ws uint64, ref FileRef, src string) (Image, error) {
	unavailable := func(reason string) error {
		return &Error{Kind: EINVALID, Code: "image_unavailable", Message: fmt.Sprintf("The image at %s cannot be fetched: %s.", src, reason)}
	}
	if ref.WS != ws {
		return Image{}, unavailable("it is a file of another workspace, and the service refuses it as it refuses a private address")
	}
	_, content, err := e.OpenFile(ref)
	if IsKind(err, ENOTFOUND) {
		return Image{}, unavailable("no such file (an asset is served once completed)")
	}
	if err != nil {
		return Image{}, err
	}
	data, err := io.ReadAll(io.LimitReader(content, MaxImageBytes+1))
	if err != nil {
		return Image{}, err
	}
	return checkImage(data)
}

// checkImage verifies the bytes of an image the service is given.
func checkImage(data []byte) (Image, error) {
	if len(data) > MaxImageBytes {
		return Image{}, &Error{Kind: ETOOLARGE, Code: "file_too_large",
			Message: fmt.Sprintf("The image is %d bytes; the limit is %d bytes (10 MiB).", len(data), MaxImageBytes),
			Details: map[string]any{"limit_bytes": MaxImageBytes, "size_bytes": len(data)}}
	}
	info, err := media.Sniff(data)
	switch {
	case errors.Is(err, media.ErrUnsupported):
		return Image{}, &Error{Kind: EINVALID, Code: "unsupported_image_type",
			Message: "The image is not a JPEG, PNG or WEBP (the type is detected from the bytes).",
			Details: map[string]any{"allowed": []string{"image/jpeg", "image/png", "image/webp"}}}
	case err != nil:
		return Image{}, &Error{Kind: EINVALID, Code: "invalid_image", Message: "The image cannot be used: " + err.Error() + "."}
	}
	return Image{Data: data, MimeType: info.MimeType, Width: info.Width, Height: info.Height}, nil
}

// decodeDataURI decodes data:<image type>;base64,<data>.
func decodeDataURI(s string) ([]byte, error) {
	header, payload, ok := strings.Cut(strings.TrimPrefix(s, "data:"), ",")
	if !ok || !strings.HasSuffix(header, ";base64") {
		return nil, &Error{Kind: EINVALID, Code: "invalid_data_uri", Message: "A data URI must have the form data:<image media type>;base64,<data>."}
	}
	mt := strings.TrimSuffix(header, ";base64")
	if !strings.HasPrefix(mt, "image/") {
		return nil, &Error{Kind: EINVALID, Code: "invalid_data_uri", Message: fmt.Sprintf("A data URI must carry an image media type, not %q.", mt)}
	}
	if base64.StdEncoding.DecodedLen(len(payload)) > MaxImageBytes+3 {
		return nil, &Error{Kind: ETOOLARGE, Code: "file_too_large", Message: "The image is over 10 MiB.",
			Details: map[string]any{"limit_bytes": MaxImageBytes}}
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		if data, err = base64.RawStdEncoding.DecodeString(payload); err != nil {
			return nil, &Error{Kind: EINVALID, Code: "invalid_data_uri", Message: "The data URI is not valid base64."}
		}
	}
	return data, nil
}
