package sim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWorkspaceDetail(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_all_scopes")
	e.Allow(p.WorkspaceID)
	e.Allow(p.WorkspaceID)
	d, err := e.WorkspaceDetail(p.WorkspaceID)
	require.NoError(t, err)
	assert.Equal(t, "Acme Studio", d.Name)
	assert.Equal(t, 120, d.Rate.Limit)
	assert.Equal(t, 118, d.Rate.Remaining, "two requests counted, the read itself not")
	assert.Equal(t, DefaultEpoch.Add(time.Minute), d.Rate.Reset)
	var tokens []string
	for _, tok := range d.Tokens {
		tokens = append(tokens, tok.Token)
	}
	assert.Contains(t, tokens, "mk_test_all_scopes")
	assert.Contains(t, tokens, "oat_test_acme_scheduler")
	assert.NotContains(t, tokens, "mk_test_free_plan")

	_, err = e.WorkspaceDetail(999)
	assert.Equal(t, ENOTFOUND, AsError(err).Kind)
}

func TestJobsLibraryAndPublicationsAcrossWorkspaces(t *testing.T) {
	e := newEngine(t, engineOpts{})
	acme := principal(t, e, "mk_test_all_scopes")
	north := principal(t, e, "mk_test_business")
	ctx := context.Background()
	g1, err := e.CreateGeneration(ctx, acme, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "first of acme"})
	require.NoError(t, err)
	g2, err := e.CreateGeneration(ctx, north, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "of northwind"})
	require.NoError(t, err)
	enc, err := e.CreateEncore(ctx, acme, EncoreRequest{Effect: "golden-hour", ImageURL: "https://example.com/me.jpg"})
	require.NoError(t, err)

	jobs, err := e.Jobs(JobQuery{Limit: 10})
	require.NoError(t, err)
	require.Len(t, jobs.Data, 3)
	assert.Equal(t, "encore", jobs.Data[0].Type, "newest first")
	assert.Equal(t, enc.ID, jobs.Data[0].Encore.ID)
	assert.Equal(t, "of northwind", jobs.Data[1].Prompt)
	assert.Equal(t, KindImage, jobs.Data[2].Kind)

	page, err := e.Jobs(JobQuery{Limit: 1, WorkspaceID: acme.WorkspaceID})
	require.NoError(t, err)
	require.Len(t, page.Data, 1)
	assert.True(t, page.HasMore)
	page, err = e.Jobs(JobQuery{Limit: 5, WorkspaceID: acme.WorkspaceID, StartingAfter: page.Data[0].ID})
	require.NoError(t, err)
	require.Len(t, page.Data, 1)
	assert.Equal(t, g1.Assets[0].ID, page.Data[0].AssetIDs[0])
	_, err = e.Advance(time.Minute)
	require.NoError(t, err)
	done, err := e.Jobs(JobQuery{Limit: 5, Status: StatusCompleted, Type: "generation"})
	require.NoError(t, err)
	assert.Len(t, done.Data, 2)

	lib, err := e.Library(0, AssetQuery{Limit: 3})
	require.NoError(t, err)
	require.Len(t, lib.Data, 3)
	assert.True(t, lib.HasMore, "the fixtures' libraries are behind")
	assert.Equal(t, enc.AssetID, lib.Data[0].ID)
	require.NotNil(t, lib.Data[0].Encore)
	assert.Equal(t, enc.ID, lib.Data[0].Encore.ID)
	assert.Equal(t, g2.Assets[0].ID, lib.Data[1].ID)
	assert.Equal(t, north.WorkspaceID, lib.Data[1].WorkspaceID)
	only, err := e.Library(north.WorkspaceID, AssetQuery{Limit: 50, Query: "of northwind"})
	require.NoError(t, err)
	require.Len(t, only.Data, 1)

	img, err := e.ListAssets(acme, AssetQuery{Kind: KindImage, Status: StatusCompleted, Limit: 1})
	require.NoError(t, err)
	pub, err := e.CreatePublication(acme, PublicationRequest{AssetIDs: []uint64{img.Data[0].ID}, Caption: "hi", Platforms: []string{"instagram"}})
	require.NoError(t, err)
	pubs, err := e.AllPublications(0, "", 0, 50)
	require.NoError(t, err)
	require.NotEmpty(t, pubs.Data)
	assert.Equal(t, pub.ID, pubs.Data[0].ID)
	none, err := e.AllPublications(north.WorkspaceID, PubPublishing, 0, 50)
	require.NoError(t, err)
	assert.Empty(t, none.Data)
}
