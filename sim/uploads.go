package sim

import (
	"context"
)

// UploadInput is one image to import: bytes from a multipart file, or an
// image_url (https or data URI).
type UploadInput struct {
	Data     []byte
	ImageURL string
	Title    string
}

// Upload imports an image into the library: free, completed at once, with
// its type detected from the bytes and its size read from the header.
func (e *Engine) Upload(ctx context.Context, p Principal, in UploadInput) (Asset, error) {
	var img Image
	var err error
	switch {
	case in.Data != nil && in.ImageURL != "":
		return Asset{}, InvalidError([]Violation{{In: "body", Field: "file", Reason: "send one image source: a file part or image_url, not both"}})
	case in.Data != nil:
		img, err = checkImage(in.Data)
	case in.ImageURL != "":
		img, err = e.resolveImage(ctx, in.ImageURL, true)
	default:
		return Asset{}, InvalidError([]Violation{{In: "body", Field: "image_url", Reason: "an image source is required: image_url (JSON or form field) or a file part (multipart)"}})
	}
	if err != nil {
		return Asset{}, err
	}
	var out Asset
	err = e.update(func(t *tx) error {
		a := &Asset{WorkspaceID: p.WorkspaceID, Source: SourceUpload, Kind: KindImage, Status: StatusCompleted,
			Title: in.Title, MimeType: img.MimeType, Width: img.Width, Height: img.Height, CreatedAt: StampOf(t.now)}
		if err := t.insertAsset(a); err != nil {
			return err
		}
		t.note("upload")
		if err := t.putFile(FileAsset, a.WorkspaceID, a.ID, img.Data); err != nil {
			return err
		}
		out = *a
		return nil
	})
	return out, err
}
