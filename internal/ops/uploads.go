package ops

import (
	"errors"
	"io"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// uploadInput is the body of POST /uploads: a JSON object, or a multipart
// form as its front read it.
type uploadInput struct {
	ImageURL wire.DataURIString `json:"image_url"` // shares the body's bytes
	Title    string             `json:"title"`
	Form     *contract.Form
}

// upload is what the engine is given of an upload: from a form, the last
// file, image_url and title parts (a file over the image limit is refused
// as such); from JSON, its fields.
func (in *uploadInput) upload() (sim.UploadInput, error) {
	f := in.Form
	if f == nil {
		return sim.UploadInput{ImageURL: string(in.ImageURL), Title: in.Title}, nil
	}
	var up sim.UploadInput
	if f.ReaderErr != nil {
		return up, &sim.Error{Kind: sim.EINVALID, Code: "invalid_body", Message: "The multipart form cannot be read: " + f.ReaderErr.Error() + "."}
	}
	for _, part := range f.Parts {
		switch part.Name {
		case "file":
			if len(part.Data) > sim.MaxImageBytes {
				return up, wire.FileTooLarge()
			}
			if part.Err != nil {
				return up, wire.BodyError(part.Err)
			}
			up.Data, up.FileName = part.Data, part.FileName
		case "image_url", "title":
			if part.Err != nil {
				return up, wire.BodyError(part.Err)
			}
			if part.Name == "title" {
				up.Title = string(part.Data)
			} else {
				up.ImageURL = string(part.Data)
			}
		default:
			if part.Err != nil {
				return up, wire.BodyError(part.Err)
			}
		}
	}
	if f.Err != nil && !errors.Is(f.Err, io.EOF) {
		return up, wire.BodyError(f.Err)
	}
	return up, nil
}
