package result

// Totals are a run's calls (record, verify --live) as reports carry them:
// internal/ledger counts them, render writes their line.
type Totals struct {
	Calls          int        `json:"calls"`
	Tokens         Tokens     `json:"tokens"`
	CostUSD        *float64   `json:"cost_usd"` // null when nothing is priced
	UnpricedTokens int64      `json:"unpriced_tokens"`
	Unpriced       []Unpriced `json:"unpriced"`
	LatencyMS      Latency    `json:"latency_ms"`
}

// Tokens are token sums by kind. Unsplit counts tokens of calls that have
// only tokens_used (no input/output breakdown); they are part of Total.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	Unsplit    int64 `json:"unsplit"`
	Total      int64 `json:"total"`
}

// Latency is p50, p95 (nearest rank) and max of latency_ms.
type Latency struct {
	P50 int64 `json:"p50"`
	P95 int64 `json:"p95"`
	Max int64 `json:"max"`
}

// Unpriced is tokens of one model that the config's prices do not cover.
type Unpriced struct {
	Model  string `json:"model"`
	Tokens int64  `json:"tokens"`
	Reason string `json:"reason"`
}
