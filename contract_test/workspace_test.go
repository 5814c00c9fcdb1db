package contract_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type apiCharacter struct {
	ID          int64  `json:"id"`
	Object      string `json:"object"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Status      string `json:"status"`
	ImageURL    string `json:"image_url"`
	CreatedAt   string `json:"created_at"`
}

type apiBrandKit struct {
	ID             int64    `json:"id"`
	Object         string   `json:"object"`
	Name           string   `json:"name"`
	Niche          string   `json:"niche"`
	Tone           string   `json:"tone"`
	TargetAudience string   `json:"target_audience"`
	Instructions   string   `json:"instructions"`
	Colors         []string `json:"colors"`
	Fonts          *struct {
		Heading string `json:"heading"`
		Body    string `json:"body"`
	} `json:"fonts"`
	CreatedAt string `json:"created_at"`
}

type apiProject struct {
	ID        int64  `json:"id"`
	Object    string `json:"object"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	URL       string `json:"url"`
	CreatedAt string `json:"created_at"`
}

func TestListCharactersOnlyReady(t *testing.T) {
	t.Parallel()
	e := startShared(t)
	list := decodeAs[apiList[apiCharacter]](e.get(keyRead, "/characters").expect(http.StatusOK))
	assert.Equal(t, "list", list.Object)
	assert.False(t, list.HasMore)
	assert.Nil(t, list.NextCursor)
	var names []string
	for _, c := range list.Data {
		names = append(names, c.Name)
		assert.Equal(t, "character", c.Object)
		assert.Equal(t, "ready", c.Status)
		assert.Positive(t, c.ID)
		parseTime(t, c.CreatedAt)
		u, err := url.Parse(c.ImageURL)
		require.NoError(t, err)
		assert.True(t, u.IsAbs(), "image_url is absolute: %s", c.ImageURL)
	}
	// Acme Studio has Maya, Theo and Iris ready, and Draft Dan still training.
	assert.ElementsMatch(t, []string{"Maya", "Theo", "Iris"}, names)
	assert.NotContains(t, names, "Draft Dan", "a character in training is not listed")

	// The portrait is a JPEG, served without a token.
	res := e.fetch(list.Data[0].ImageURL).expect(http.StatusOK)
	assert.Equal(t, "image/jpeg", res.Header.Get("Content-Type"))
	assert.True(t, bytes.HasPrefix(res.Body, []byte{0xFF, 0xD8, 0xFF}), "JPEG magic number")

	// Each workspace sees its own characters.
	other := decodeAs[apiList[apiCharacter]](e.get(keyFree, "/characters").expect(http.StatusOK))
	require.Len(t, other.Data, 1)
	for _, c := range list.Data {
		assert.NotEqual(t, c.ID, other.Data[0].ID)
	}
	empty := decodeAs[apiList[apiCharacter]](e.get(keyBroke, "/characters").expect(http.StatusOK))
	assert.Empty(t, empty.Data)
	assert.Contains(t, string(e.get(keyBroke, "/characters").Body), `"data":[]`, "an empty list is [], not null")
}

var hexColor = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)

func TestListBrandKits(t *testing.T) {
	t.Parallel()
	e := startShared(t)
	list := decodeAs[apiList[apiBrandKit]](e.get(keyRead, "/brand_kits").expect(http.StatusOK))
	assert.Equal(t, "list", list.Object)
	assert.False(t, list.HasMore)
	require.Len(t, list.Data, 3, "Acme Studio has three brand kits")
	for _, b := range list.Data {
		assert.Equal(t, "brand_kit", b.Object)
		assert.Positive(t, b.ID)
		for field, v := range map[string]string{"name": b.Name, "niche": b.Niche, "tone": b.Tone, "target_audience": b.TargetAudience, "instructions": b.Instructions} {
			assert.NotEmpty(t, v, "brand kit %d: %s", b.ID, field)
		}
		assert.NotEmpty(t, b.Colors)
		for _, c := range b.Colors {
			assert.Regexp(t, hexColor, c, "colors are #RRGGBB")
		}
		require.NotNil(t, b.Fonts)
		assert.NotEmpty(t, b.Fonts.Heading)
		assert.NotEmpty(t, b.Fonts.Body)
	}
	// The fixture's named kit, field by field.
	var acme *apiBrandKit
	for i := range list.Data {
		if list.Data[i].Name == "Acme Coffee Roasters" {
			acme = &list.Data[i]
		}
	}
	require.NotNil(t, acme)
	assert.Equal(t, "specialty coffee", acme.Niche)
	assert.Equal(t, "warm", acme.Tone)
	assert.Equal(t, "young professionals aged 25-34", acme.TargetAudience)
	assert.Equal(t, []string{"#3E2723", "#D7A86E", "#F5F0E6"}, acme.Colors)
	assert.Equal(t, "Playfair Display", acme.Fonts.Heading)
	assert.Equal(t, "Inter", acme.Fonts.Body)

	paged, n := pages[apiBrandKit](e, keyRead, "/brand_kits", 1)
	assert.Equal(t, 3, n, "three pages of one")
	assert.Equal(t, list.Data, paged, "the pages hold the whole list, in order")

	e.get(keyRead, "/brand_kits?limit=0").expectInvalid("limit")
	e.get(keyRead, "/brand_kits?limit=51").expectInvalid("limit")
	e.get(keyRead, "/brand_kits?starting_after=-3").expectInvalid("starting_after")
	e.get(keyRead, "/brand_kits?limit=two").expectInvalid("limit")

	empty := decodeAs[apiList[apiBrandKit]](e.get(keyBroke, "/brand_kits").expect(http.StatusOK))
	assert.Empty(t, empty.Data)
	assert.False(t, empty.HasMore)
}

func TestListProjects(t *testing.T) {
	t.Parallel()
	e := startShared(t)
	list := decodeAs[apiList[apiProject]](e.get(keyRead, "/projects").expect(http.StatusOK))
	assert.Equal(t, "list", list.Object)
	require.Len(t, list.Data, 5, "Acme Studio has five projects")
	var names []string
	for i, p := range list.Data {
		names = append(names, p.Name)
		assert.Equal(t, "project", p.Object)
		assert.Contains(t, []string{"active", "completed", "archived"}, p.Status)
		u, err := url.Parse(p.URL)
		require.NoError(t, err)
		assert.True(t, u.IsAbs(), "url is absolute: %s", p.URL)
		created := parseTime(t, p.CreatedAt)
		if i > 0 {
			prev := list.Data[i-1]
			assert.False(t, created.After(parseTime(t, prev.CreatedAt)), "newest first")
			assert.Less(t, p.ID, prev.ID, "newest first")
		}
	}
	assert.Contains(t, names, "Spring Launch")
	assert.Contains(t, names, "Holiday Lookbook")
	for _, p := range list.Data {
		switch p.Name {
		case "Spring Launch":
			assert.Equal(t, "active", p.Status)
		case "Holiday Lookbook":
			assert.Equal(t, "completed", p.Status)
		}
	}

	paged, n := pages[apiProject](e, keyRead, "/projects", 2)
	assert.Equal(t, 3, n)
	assert.Equal(t, list.Data, paged)

	// Northwind Media has eight: pages of 4 end exactly on a page boundary.
	big, n := pages[apiProject](e, keyBusiness, "/projects", 4)
	assert.Equal(t, 2, n, "no empty third page")
	assert.Len(t, big, 8)
	whole := decodeAs[apiList[apiProject]](e.get(keyBusiness, "/projects?limit=50").expect(http.StatusOK))
	assert.Equal(t, whole.Data, big)
	for _, p := range big {
		for _, a := range list.Data {
			assert.NotEqual(t, a.ID, p.ID, "another workspace's projects")
		}
	}

	e.get(keyRead, "/projects?limit=0").expectInvalid("limit")
	e.get(keyRead, "/projects?limit=51").expectInvalid("limit")
	e.get(keyRead, fmt.Sprintf("/projects?starting_after=%s", "x")).expectInvalid("starting_after")
	empty := decodeAs[apiList[apiProject]](e.get(keyBroke, "/projects").expect(http.StatusOK))
	assert.Empty(t, empty.Data)
}
