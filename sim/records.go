package sim

import "github.com/mediamock/mediamock/fixtures"

// Status values of assets, generations and Encore creations.
const (
	StatusQueued     = "queued"
	StatusProcessing = "processing"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
)

// Asset kinds (the table of modalities in package fixtures has them all)
// and sources.
const (
	KindImage   = fixtures.KindImage
	KindVideo   = fixtures.KindVideo
	KindVoice   = fixtures.KindVoice
	KindMusic   = fixtures.KindMusic
	KindModel3D = fixtures.KindModel3D

	SourceGeneration = "generation"
	SourceUpload     = "upload"
	SourceEncore     = "encore"
)

// Scopes of tokens.
const (
	ScopeRead     = "read"
	ScopeGenerate = "generate"
	ScopePublish  = "publish"
)

// Workspace is one customer workspace and its credit state.
type Workspace struct {
	ID                uint64      `json:"id"`
	Name              string      `json:"name"`
	Plan              string      `json:"plan"`
	RateLimit         int         `json:"rate_limit"`
	PublishingAllowed bool        `json:"publishing_allowed"`
	Balance           int64       `json:"balance"`
	Gifts             []GiftState `json:"gifts,omitempty"`
	CreatedAt         Stamp       `json:"created_at"`
}

// GiftState is a monthly gift and how much of it this month used.
type GiftState struct {
	ModelID  string `json:"model_id"`
	PerMonth int    `json:"per_month"`
	Month    string `json:"month"` // YYYY-MM of Used
	Used     int    `json:"used"`
}

// Token is an API key or OAuth access token.
type Token struct {
	Token       string   `json:"token"`
	WorkspaceID uint64   `json:"workspace_id"`
	Type        string   `json:"type"` // api_key or oauth
	Name        string   `json:"name"`
	Scopes      []string `json:"scopes"`
	// ExpiresAt, when not zero, is when the token stops working (Unix
	// seconds on the simulated clock): access tokens issued by the
	// authorization server.
	ExpiresAt int64 `json:"expires_at,omitempty"`
	// Resources are the protected resources an access token was issued
	// for (RFC 8707): "/mcp", "/api/v1"; empty, every one.
	Resources []string `json:"resources,omitempty"`
}

// Problem says why a job failed.
type Problem struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Asset is a library asset.
type Asset struct {
	ID              uint64   `json:"id"`
	WorkspaceID     uint64   `json:"ws"`
	JobID           uint64   `json:"job,omitempty"`
	Source          string   `json:"source"`
	Kind            string   `json:"kind"`
	Status          string   `json:"status"`
	Model           string   `json:"model,omitempty"`
	Title           string   `json:"title,omitempty"`
	Prompt          string   `json:"prompt,omitempty"`
	ProjectID       uint64   `json:"project,omitempty"`
	Credits         int64    `json:"credits"`
	MimeType        string   `json:"mime,omitempty"`
	Width           int      `json:"w,omitempty"`
	Height          int      `json:"h,omitempty"`
	DurationSeconds int      `json:"dur,omitempty"`
	Media           *Media   `json:"media,omitempty"` // what the file holds, for its generator
	Error           *Problem `json:"error,omitempty"`
	CreatedAt       Stamp    `json:"at"`
}

// Media describes the content of a generated file.
type Media struct {
	AspectRatio string `json:"ar,omitempty"`
	Resolution  string `json:"res,omitempty"`
	Voice       string `json:"voice,omitempty"`
	Language    string `json:"lang,omitempty"`
	Audio       bool   `json:"audio,omitempty"`
	Index       int    `json:"i,omitempty"` // output number within its generation
	SourceAsset uint64 `json:"src,omitempty"`
}

// Final reports whether the status is completed or failed.
func Final(status string) bool { return status == StatusCompleted || status == StatusFailed }

// Job is one generation or Encore creation running through its lifecycle.
type Job struct {
	ID          uint64   `json:"id"`
	WorkspaceID uint64   `json:"ws"`
	Type        string   `json:"type"` // generation or encore
	Lane        string   `json:"lane"` // image, video, audio, 3d or encore
	AssetIDs    []uint64 `json:"assets"`
	EncoreID    uint64   `json:"encore,omitempty"`
	ModelID     string   `json:"model,omitempty"`
	Status      string   `json:"status"`
	Charged     int64    `json:"charged"`
	Gift        bool     `json:"gift,omitempty"`
	Refunded    bool     `json:"refunded,omitempty"`
	QueuedFor   int64    `json:"queued_ns"`      // provider queue time
	ProcessFor  int64    `json:"processing_ns"`  // processing time
	Fate        string   `json:"fate,omitempty"` // "", fail, stick
	// AtLimit says the job waited for a slot: its workspace was running
	// its lane's limit of jobs when it was created.
	AtLimit   bool     `json:"at_limit,omitempty"`
	FailStage string   `json:"fail_stage,omitempty"`
	Failure   *Problem `json:"failure,omitempty"`
	// FailOutputs is how many of a generation's outputs fail when it
	// completes (Fates.FailedOutputs), each refunded.
	FailOutputs int    `json:"fail_outputs,omitempty"`
	Due         []byte `json:"due,omitempty"` // key of its pending event
	CreatedAt   Stamp  `json:"created_at"`
	StartedAt   Stamp  `json:"started_at,omitempty"`
	FinishedAt  Stamp  `json:"finished_at,omitempty"`
}

// LedgerEntry is one movement of credits.
type LedgerEntry struct {
	ID          uint64   `json:"id"`
	At          string   `json:"at"`
	Type        string   `json:"type"` // grant, charge, refund, gift
	Amount      int64    `json:"amount"`
	Balance     int64    `json:"balance_after"`
	JobID       uint64   `json:"job_id,omitempty"`
	AssetIDs    []uint64 `json:"asset_ids,omitempty"`
	EncoreID    uint64   `json:"encore_creation_id,omitempty"`
	ModelID     string   `json:"model_id,omitempty"`
	Effect      string   `json:"effect,omitempty"`
	Covered     int64    `json:"covered,omitempty"` // credits a gift covered
	Description string   `json:"description"`
}

// Ledger entry types.
const (
	LedgerGrant  = "grant"
	LedgerCharge = "charge"
	LedgerRefund = "refund"
	LedgerGift   = "gift"
)
