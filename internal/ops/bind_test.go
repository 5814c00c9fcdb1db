package ops

import (
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
	"github.com/mediamock/mediamock/spec"
)

// testAPI is openapi.json's contract.
var testAPI = func() func(t *testing.T) *contract.Contract {
	api := sync.OnceValues(func() (*contract.Contract, error) { return contract.ParseEmbedded("openapi.json", spec.OpenAPI) })
	return func(t *testing.T) *contract.Contract {
		c, err := api()
		require.NoError(t, err)
		return c
	}
}()

// bodyOf is a document decoded as the contract decodes the body of op,
// valid or not.
func bodyOf(t *testing.T, op, doc string) contract.Body {
	t.Helper()
	api := testAPI(t)
	in := &contract.Input{Body: api.ArgumentsBody([]byte(doc))}
	api.Decode(op, in, nil)
	require.True(t, in.Body.Present())
	require.NotNil(t, in.Body.Value)
	return in.Body
}

// Every input type of the handlers is bound from a decoded body as the
// handlers' decoder (wire.UnmarshalJSON: encoding/json, integral numbers
// such as 2.0 taken as integers) filled it from the same document.
func TestBindingIsWhatJSONDecodes(t *testing.T) {
	check := func(t *testing.T, doc string, decoded, bound any) {
		t.Helper()
		require.NoError(t, wire.UnmarshalJSON([]byte(doc), decoded), doc)
		assert.Equal(t, decoded, bound, doc)
	}
	for _, doc := range []string{
		`{"modality":"image","model_id":"imagen-4","prompt":"a kite","wait_seconds":30}`,
		`{"modality":"video","model_id":"veo-3","prompt":"é \"q\" \n","count":2.0,"duration":8,"generate_audio":false,
		  "reference_asset_ids":[1,2,9007199254740991],"reference_image_urls":["https://x/a.png","data:image/png;base64,AA=="],"track":"music"}`,
		`{"modality":"audio","model_id":"m","prompt":"p","voice":null,"count":null,"reference_asset_ids":[]}`,
	} {
		var bound generationInput
		require.NoError(t, binderOf[generationInput]().bind(&bound, &contract.Input{Body: bodyOf(t, "createGeneration", doc)}))
		check(t, doc, &generationInput{}, &bound)
	}
	for _, doc := range []string{
		`{"asset_ids":[16],"caption":"hi","platforms":["instagram"],"scheduled_at":"2026-02-01T00:00:00Z","options":{"title":"T","youtube_format":"short"}}`,
		`{"asset_ids":[16,17],"caption":"","social_account_ids":[3]}`,
	} {
		var bound sim.PublicationRequest
		require.NoError(t, binderOf[sim.PublicationRequest]().bind(&bound, &contract.Input{Body: bodyOf(t, "createPublication", doc)}))
		check(t, doc, &sim.PublicationRequest{}, &bound)
	}
	for _, doc := range []string{`{"effect":"golden-hour","asset_id":7,"wait_seconds":1}`, `{"effect":"e","image_url":"https://x/y.jpg","character_id":2}`} {
		var bound encoreInput
		require.NoError(t, binderOf[encoreInput]().bind(&bound, &contract.Input{Body: bodyOf(t, "createEncoreCreation", doc)}))
		check(t, doc, &encoreInput{}, &bound)
	}
}

// Parameters are parsed into their fields, the promoted ones included; a
// value absent (or the first of several empty) leaves the operation's
// default.
func TestBindingParameters(t *testing.T) {
	var q assetsQuery
	in := &contract.Input{Query: url.Values{"kind": {"image"}, "limit": {"7", "9"}, "starting_after": {"40"}, "project_id": {""}, "query": {"a b"}}}
	require.NoError(t, binderOf[assetsQuery]().bind(&q, in))
	assert.Equal(t, assetsQuery{Kind: "image", Query: "a b", page: page{StartingAfter: 40, Limit: 7}}, q)
	assert.Equal(t, 7, q.limit())
	assert.Equal(t, 20, (&page{}).limit())

	var p polled
	require.NoError(t, binderOf[polled]().bind(&p, &contract.Input{Path: map[string]string{"id": "61"}, Query: url.Values{"wait_seconds": {"30"}}}))
	assert.Equal(t, polled{ID: 61, WaitSeconds: 30}, p)
}

// A data URI shares the body's bytes; every other string is a copy, as
// encoding/json makes it (a prompt the engine keeps does not hold the
// body alive).
func TestBindingSharesDataURIsOnly(t *testing.T) {
	uri := "data:image/png;base64," + strings.Repeat("A", 1<<10)
	doc := []byte(`{"image_url":"` + uri + `","title":"a title"}`)
	raw, title := doc[len(`{"image_url":`):], doc[len(doc)-len(`"a title"}`):]
	api := testAPI(t)
	input := &contract.Input{Body: api.ArgumentsBody(doc)}
	require.NoError(t, api.Validate("createUpload", input, nil), "validated, and decoded")
	var in uploadInput
	require.NoError(t, binderOf[uploadInput]().bind(&in, input))
	assert.Equal(t, uri, string(in.ImageURL))
	assert.Equal(t, unsafe.Pointer(&raw[1]), unsafe.Pointer(unsafe.StringData(string(in.ImageURL))), "the data URI is the body's bytes")
	assert.Equal(t, "a title", in.Title)
	assert.NotEqual(t, unsafe.Pointer(&title[1]), unsafe.Pointer(unsafe.StringData(in.Title)), "a title is a copy")

	var form contract.Form
	require.NoError(t, binderOf[uploadInput]().bind(&in, &contract.Input{Body: contract.Body{Value: &form}}))
	assert.Same(t, &form, in.Form, "a multipart form is the input's as read")
}

// A value the input's type cannot hold is an invalid_json error (the
// contract lets none through with openapi.json's schemas: the two
// disagree), never a panic.
func TestBindingMismatch(t *testing.T) {
	for _, doc := range []string{`{"count":1.5}`, `{"count":"2"}`, `{"reference_asset_ids":[-1]}`, `{"reference_asset_ids":{}}`, `{"generate_audio":1}`} {
		var in generationInput
		err := binderOf[generationInput]().bind(&in, &contract.Input{Body: bodyOf(t, "createGeneration", doc)})
		require.Error(t, err, doc)
		assert.Equal(t, "invalid_json", sim.AsError(err).Code, doc)
	}
	var in sim.PublicationRequest
	err := binderOf[sim.PublicationRequest]().bind(&in, &contract.Input{Body: bodyOf(t, "createPublication", `{"scheduled_at":"tomorrow"}`)})
	var want sim.PublicationRequest
	jsonErr := wire.UnmarshalJSON([]byte(`{"scheduled_at":"tomorrow"}`), &want)
	require.Error(t, err)
	assert.Equal(t, jsonErr.Error(), err.Error(), "the time's error, as encoding/json words it")
}

// Every handler's input type can be bound: the plans are made at start.
func TestEveryHandlerHasABinder(t *testing.T) {
	for op, h := range handlers {
		assert.NotNil(t, h, op)
	}
	assert.Panics(t, func() { binderOf[struct{ C chan int }]() }, "a field the binder cannot fill is refused at start")
	assert.Equal(t, reflect.Struct, reflect.TypeFor[none]().Kind())
}
