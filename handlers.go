package mediamock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mediamock/mediamock/sim"
)

// apiRoutes is the routing table, in the order of the service's specification.
func apiRoutes() []route {
	return []route{
		{"GET", "/account", "getAccount", getAccount},
		{"GET", "/models", "listModels", listModels},
		{"POST", "/generations", "createGeneration", createGeneration},
		{"GET", "/generations/{id}", "getGeneration", getGeneration},
		{"GET", "/assets", "listAssets", listAssets},
		{"GET", "/assets/{id}", "getAsset", getGeneration},
		{"POST", "/uploads", "createUpload", createUpload},
		{"GET", "/encore/effects", "listEncoreEffects", listEncoreEffects},
		{"POST", "/encore/creations", "createEncoreCreation", createEncoreCreation},
		{"GET", "/encore/creations/{id}", "getEncoreCreation", getEncoreCreation},
		{"GET", "/characters", "listCharacters", listCharacters},
		{"GET", "/brand_kits", "listBrandKits", listBrandKits},
		{"GET", "/projects", "listProjects", listProjects},
		{"GET", "/social/accounts", "listSocialAccounts", listSocialAccounts},
		{"GET", "/social/publications", "listPublications", listPublications},
		{"POST", "/social/publications", "createPublication", createPublication},
		{"GET", "/social/publications/{id}", "getPublication", getPublication},
	}
}

func getAccount(c *call) (int, any, error) {
	a, err := c.s.eng.Account(c.p)
	return http.StatusOK, accountOf(a), err
}

func listModels(c *call) (int, any, error) {
	modality, track := c.query("modality"), c.query("track")
	if track != "" && modality == "" {
		modality = "audio"
	}
	if track != "" && modality != "audio" {
		return 0, nil, sim.InvalidError([]sim.Violation{{In: "query", Field: "track", Reason: "track applies to the audio modality only", Allowed: []any{"audio"}}})
	}
	groups := map[string][]modelJSON{}
	for _, m := range []string{"image", "video", "audio", "3d"} {
		if modality == "" || modality == m {
			groups[m] = []modelJSON{}
		}
	}
	for _, m := range c.s.eng.Models(modality, track) {
		groups[m.Modality] = append(groups[m.Modality], modelOf(m))
	}
	return http.StatusOK, catalogJSON{Object: "model_catalog", Modalities: groups}, nil
}

type generationBody struct {
	sim.GenerationRequest
	WaitSeconds int `json:"wait_seconds"`
}

func createGeneration(c *call) (int, any, error) {
	var body generationBody
	if err := c.decode(&body); err != nil {
		return 0, nil, err
	}
	g, err := c.s.eng.CreateGeneration(c.r.Context(), c.p, body.GenerationRequest)
	if err != nil {
		return 0, nil, err
	}
	out := generationCreatedJSON{CreditsCharged: g.CreditsCharged, CreditsBalance: g.CreditsBalance, CoveredByMonthlyGift: g.CoveredByGift}
	if body.WaitSeconds > 0 && !sim.Final(g.Status) {
		ctx, cancel := c.waitContext(body.WaitSeconds)
		defer cancel()
		read, err := c.s.eng.Generation(ctx, c.p, g.Assets[0].ID, time.Duration(body.WaitSeconds)*time.Second)
		if err != nil {
			return 0, nil, err
		}
		g.Generation = read
	}
	out.generationJSON = c.generation(g.Generation)
	return http.StatusCreated, out, nil
}

func getGeneration(c *call) (int, any, error) {
	wait := c.queryInt("wait_seconds", 0)
	ctx, cancel := c.waitContext(wait)
	defer cancel()
	g, err := c.s.eng.Generation(ctx, c.p, c.id(), time.Duration(wait)*time.Second)
	return http.StatusOK, c.generation(g), err
}

func listAssets(c *call) (int, any, error) {
	pg, err := c.s.eng.ListAssets(c.p, sim.AssetQuery{
		Kind: c.query("kind"), Status: c.query("status"), Query: c.query("query"),
		ProjectID: uint64(c.queryInt("project_id", 0)), StartingAfter: uint64(c.queryInt("starting_after", 0)),
		Limit: c.queryInt("limit", 20),
	})
	return http.StatusOK, list(pg, c.asset, func(a sim.Asset) uint64 { return a.ID }), err
}

func createUpload(c *call) (int, any, error) {
	in, err := c.uploadInput()
	if err != nil {
		return 0, nil, err
	}
	a, err := c.s.eng.Upload(c.r.Context(), c.p, in)
	return http.StatusCreated, c.asset(a), err
}

// uploadInput reads the JSON or multipart form of an upload.
func (c *call) uploadInput() (sim.UploadInput, error) {
	mt, _, _ := mime.ParseMediaType(c.r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		var in sim.UploadInput
		if c.r.ContentLength == 0 {
			return in, nil
		}
		var body struct {
			ImageURL string `json:"image_url"`
			Title    string `json:"title"`
		}
		err := c.decode(&body)
		in.ImageURL, in.Title = body.ImageURL, body.Title
		return in, err
	}
	mr, err := c.r.MultipartReader()
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
			return in, bodyError(err)
		}
		switch part.FormName() {
		case "file":
			// Read one byte past the limit: a larger file is refused without reading the rest.
			data, err := io.ReadAll(io.LimitReader(part, sim.MaxImageBytes+1))
			if err != nil {
				return in, bodyError(err)
			}
			if len(data) > sim.MaxImageBytes {
				return in, fileTooLarge()
			}
			in.Data = data
		case "image_url", "title":
			b, err := io.ReadAll(io.LimitReader(part, 20<<20))
			if err != nil {
				return in, bodyError(err)
			}
			if part.FormName() == "title" {
				in.Title = string(b)
			} else {
				in.ImageURL = string(b)
			}
		}
	}
}

func bodyError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge(mbe.Limit)
	}
	return &sim.Error{Kind: sim.EINVALID, Code: "invalid_body", Message: "The body cannot be read: " + err.Error() + "."}
}

func listEncoreEffects(c *call) (int, any, error) {
	return http.StatusOK, whole(c.s.eng.EncoreEffects(), effectOf), nil
}

type encoreBody struct {
	sim.EncoreRequest
	WaitSeconds int `json:"wait_seconds"`
}

func createEncoreCreation(c *call) (int, any, error) {
	var body encoreBody
	if err := c.decode(&body); err != nil {
		return 0, nil, err
	}
	created, err := c.s.eng.CreateEncore(c.r.Context(), c.p, body.EncoreRequest)
	if err != nil {
		return 0, nil, err
	}
	view := created.EncoreView
	if body.WaitSeconds > 0 {
		ctx, cancel := c.waitContext(body.WaitSeconds)
		defer cancel()
		if view, err = c.s.eng.Encore(ctx, c.p, view.ID, time.Duration(body.WaitSeconds)*time.Second); err != nil {
			return 0, nil, err
		}
	}
	return http.StatusCreated, encoreCreatedJSON{encoreJSON: c.encore(view), CreditsCharged: created.CreditsCharged, CreditsBalance: created.CreditsBalance}, nil
}

func getEncoreCreation(c *call) (int, any, error) {
	wait := c.queryInt("wait_seconds", 0)
	ctx, cancel := c.waitContext(wait)
	defer cancel()
	v, err := c.s.eng.Encore(ctx, c.p, c.id(), time.Duration(wait)*time.Second)
	return http.StatusOK, c.encore(v), err
}

func listCharacters(c *call) (int, any, error) {
	chars, err := c.s.eng.Characters(c.p)
	return http.StatusOK, whole(chars, c.character), err
}

func listBrandKits(c *call) (int, any, error) {
	pg, err := c.s.eng.BrandKits(c.p, uint64(c.queryInt("starting_after", 0)), c.queryInt("limit", 20))
	return http.StatusOK, list(pg, brandKitOf, func(b sim.BrandKit) uint64 { return b.ID }), err
}

func listProjects(c *call) (int, any, error) {
	pg, err := c.s.eng.Projects(c.p, uint64(c.queryInt("starting_after", 0)), c.queryInt("limit", 20))
	conv := func(p sim.Project) projectJSON {
		return projectJSON{ID: p.ID, Object: "project", Name: p.Name, Status: p.Status, URL: c.s.eng.ProjectURL(p.ID), CreatedAt: p.CreatedAt.String()}
	}
	return http.StatusOK, list(pg, conv, func(p sim.Project) uint64 { return p.ID }), err
}

func listSocialAccounts(c *call) (int, any, error) {
	accounts, err := c.s.eng.SocialAccounts(c.p)
	if err != nil {
		return 0, nil, err
	}
	acct, err := c.s.eng.Account(c.p)
	return http.StatusOK, socialAccountListJSON{listJSON: whole(accounts, socialAccountOf),
		PublishingAllowed: acct.PublishingAllowed, ConnectURL: c.s.eng.ConnectURL()}, err
}

func listPublications(c *call) (int, any, error) {
	pg, err := c.s.eng.Publications(c.p, c.query("status"), uint64(c.queryInt("starting_after", 0)), c.queryInt("limit", 20))
	return http.StatusOK, list(pg, publicationOf, func(p sim.Publication) uint64 { return p.ID }), err
}

func createPublication(c *call) (int, any, error) {
	var req sim.PublicationRequest
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	pub, err := c.s.eng.CreatePublication(c.p, req)
	return http.StatusCreated, publicationOf(pub), err
}

func getPublication(c *call) (int, any, error) {
	pub, err := c.s.eng.Publication(c.p, c.id())
	return http.StatusOK, publicationOf(pub), err
}

// --- helpers of handlers

func (c *call) query(name string) string { return c.q.Get(name) }

// queryInt reads an integer parameter the contract has already validated.
func (c *call) queryInt(name string, def int) int {
	v := c.q.Get(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return def
	}
	return n
}

// id is the path id, validated as a positive integer by the contract.
func (c *call) id() uint64 {
	n, _ := strconv.ParseUint(c.vars["id"], 10, 64)
	return n
}

// decode reads a JSON body the contract has already validated.
func (c *call) decode(v any) error { return decodeJSON(c.r.Body, v) }

// decodeJSON reads exactly one JSON value into v. Integral numbers written
// as 1.0 or 1e2 are integers for the contract (JSON Schema), so they are for
// the decoder too.
func decodeJSON(body io.Reader, v any) error {
	data, err := io.ReadAll(body)
	if err != nil {
		return bodyError(err)
	}
	invalid := func(reason string) error {
		return &sim.Error{Kind: sim.EINVALID, Code: "invalid_json", Message: "The body is not valid JSON: " + reason + "."}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	err = dec.Decode(v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && strings.HasPrefix(te.Value, "number") {
		if data, err = integralNumbers(data); err == nil {
			dec = json.NewDecoder(bytes.NewReader(data))
			err = dec.Decode(v)
		}
	}
	if err != nil {
		return invalid(err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid("unexpected data after the JSON value")
	}
	return nil
}

// integralNumbers rewrites numbers such as 1.0 and 1e2 as 1 and 100.
func integralNumbers(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var walk func(any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case map[string]any:
			for k, e := range t {
				t[k] = walk(e)
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e)
			}
		case json.Number:
			if f, err := t.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
				return json.Number(strconv.FormatInt(int64(f), 10))
			}
		}
		return x
	}
	return json.Marshal(walk(v))
}

// waitContext bounds a long poll: it ends when the client goes away, when
// the server shuts down (the poll is answered with the current state) and,
// except on the virtual clock, after the wait in wall time.
func (c *call) waitContext(seconds int) (context.Context, context.CancelFunc) {
	ctx, cancel := c.s.untilStop(c.r.Context())
	if seconds > 0 && c.s.eng.Clock().Mode() != sim.ClockVirtual {
		ctx, cancelT := context.WithTimeout(ctx, time.Duration(seconds)*time.Second)
		return ctx, func() { cancelT(); cancel() }
	}
	return ctx, cancel
}

// untilStop is ctx, ended too when the server begins to shut down.
func (s *Server) untilStop(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.stop, cancel)
	return ctx, func() { stop(); cancel() }
}

// base is the public address links are built from.
func (c *call) base() string {
	if c.s.opts.PublicURL != "" {
		return c.s.opts.PublicURL
	}
	scheme := "http"
	if c.r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + c.r.Host
}

func (c *call) fileURL(ref sim.FileRef) string { return c.base() + "/files/" + ref.Path() }
