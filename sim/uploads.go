package sim

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"strings"
)

// UploadInput is one image to import: bytes from a multipart file, or an
// image_url (https or data URI).
type UploadInput struct {
	Data     []byte
	ImageURL string
	Title    string
	// FileName is the multipart part's file name, the title's first default.
	FileName string
}

// MaxTitle is the longest title, in characters.
const MaxTitle = 160

// uploadTitle is the title of an upload: the one given, else the file
// name of the multipart part, else the last path segment of an https URL,
// else "Upload <id>"; at most MaxTitle characters.
func uploadTitle(in UploadInput, id uint64) string {
	title := strings.TrimSpace(in.Title)
	if title == "" {
		title = strings.TrimSpace(path.Base(in.FileName))
		if title == "." || title == "/" {
			title = ""
		}
	}
	if title == "" && strings.HasPrefix(in.ImageURL, "https://") {
		if u, err := url.Parse(in.ImageURL); err == nil {
			if seg := path.Base(u.Path); seg != "." && seg != "/" {
				title = seg
			}
		}
	}
	if title == "" {
		title = fmt.Sprintf("Upload %d", id)
	}
	if r := []rune(title); len(r) > MaxTitle {
		title = strings.TrimSpace(string(r[:MaxTitle]))
	}
	return title
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
		img, err = e.resolveImage(ctx, p.WorkspaceID, in.ImageURL, true)
		if strings.HasPrefix(in.ImageURL, "data:") {
			in.ImageURL = "" // decoded: the URI's megabytes go while the image is stored
		}
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
		id, err := t.b(bAssets).NextSequence()
		if err != nil {
			return err
		}
		a.ID, a.Title = id, uploadTitle(in, id)
		if err := t.insertAsset(a); err != nil {
			return err
		}
		t.note(a.WorkspaceID, "upload")
		if err := t.putFile(FileAsset, a.WorkspaceID, a.ID, img.Data); err != nil {
			return err
		}
		out = *a
		return nil
	})
	return out, err
}
