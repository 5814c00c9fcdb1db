package ops

import (
	"bytes"
	"errors"
	"io"
	"mime"

	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// uploadInput reads the JSON or multipart form of an upload.
func (c *Call) uploadInput() (sim.UploadInput, error) {
	mt, _, _ := mime.ParseMediaType(c.Request.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		var in sim.UploadInput
		if c.Request.ContentLength == 0 {
			return in, nil
		}
		var body struct {
			ImageURL wire.DataURIString `json:"image_url"` // shares the body's bytes
			Title    string             `json:"title"`
		}
		err := c.decode(&body)
		in.ImageURL, in.Title = string(body.ImageURL), body.Title
		return in, err
	}
	mr, err := c.Request.MultipartReader()
	if err != nil {
		return sim.UploadInput{}, &sim.Error{Kind: sim.EINVALID, Code: "invalid_body", Message: "The multipart form cannot be read: " + err.Error() + "."}
	}
	var in sim.UploadInput
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return in, nil
		}
		if err != nil {
			return in, wire.BodyError(err)
		}
		switch part.FormName() {
		case "file":
			// Read one byte past the limit: a larger file is refused without reading the rest.
			// Read into one buffer of the body's size at most: growing one
			// would leave copies of the file behind.
			var buf bytes.Buffer
			buf.Grow(int(min(max(c.Request.ContentLength, 0), sim.MaxImageBytes+1)))
			if _, err := buf.ReadFrom(io.LimitReader(part, sim.MaxImageBytes+1)); err != nil {
				return in, wire.BodyError(err)
			}
			data := buf.Bytes()
			if len(data) > sim.MaxImageBytes {
				return in, wire.FileTooLarge()
			}
			in.Data, in.FileName = data, part.FileName()
		case "image_url", "title":
			b, err := io.ReadAll(io.LimitReader(part, 20<<20))
			if err != nil {
				return in, wire.BodyError(err)
			}
			if part.FormName() == "title" {
				in.Title = string(b)
			} else {
				in.ImageURL = string(b)
			}
		}
	}
}
