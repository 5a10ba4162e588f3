package bedrock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
)

// RegionPlaceholder is the host label of the default upstream that stands
// for the region of each call.
const RegionPlaceholder = "{region}"

// signingName is Bedrock's SigV4 service name (the runtime API signs as
// "bedrock").
const signingName = "bedrock"

// sigV4Headers are the headers of the client's signature, made for
// traceforge's host: removed before the request is signed anew.
var sigV4Headers = []string{"Authorization", "X-Amz-Date", "X-Amz-Security-Token", "X-Amz-Content-Sha256"}

// Scope is the credential scope of a SigV4 Authorization header:
// Credential=AKID/20261128/us-east-1/bedrock/aws4_request.
type Scope struct{ Region, Service string }

// ParseScope reads the credential scope of a SigV4 Authorization value;
// ok is false for any other scheme or a scope without region and service.
func ParseScope(auth string) (Scope, bool) {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(auth), " ")
	if !strings.EqualFold(scheme, "AWS4-HMAC-SHA256") {
		return Scope{}, false
	}
	for _, part := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || k != "Credential" {
			continue
		}
		f := strings.Split(v, "/")
		if len(f) != 5 || f[2] == "" || f[3] == "" {
			return Scope{}, false
		}
		return Scope{Region: f[2], Service: f[3]}, true
	}
	return Scope{}, false
}

// prepareUpstream is the descriptor's PrepareUpstream (DESIGN §13.5): a
// request the client signed with SigV4 (for traceforge's host, so the
// signature cannot hold upstream) loses its signature headers and is signed
// anew with traceforge's own AWS credentials (environment, shared files,
// the default chain) for the region of the client's credential scope, the
// escaped path kept; a request with no Authorization at all (verify
// --live without a key) is signed the same way, for traceforge's
// AWS_REGION; a bearer token (AWS_BEARER_TOKEN_BEDROCK, Bearer ABSK…) goes
// as it is. The default upstream's {region} is the scope's region, else
// traceforge's AWS_REGION.
func prepareUpstream(out *http.Request, body []byte) error {
	auth := out.Header.Get("Authorization")
	scope, signed := ParseScope(auth)
	// A request with no credential at all (verify --live without a Bedrock
	// API key) is signed with traceforge's credentials too.
	signed = signed || auth == ""
	region := scope.Region
	var cfg aws.Config
	if signed || region == "" {
		var err error
		if cfg, err = credentials.config(out.Context()); err != nil {
			return err
		}
		if region == "" {
			region = cfg.Region
		}
	}
	if strings.Contains(out.URL.Host, RegionPlaceholder) {
		if region == "" {
			return errors.New("bedrock: no region for the default upstream: the request carries no SigV4 credential scope and AWS_REGION is not set (or give --bedrock-upstream)")
		}
		out.URL.Host = strings.ReplaceAll(out.URL.Host, RegionPlaceholder, region)
	}
	if !signed {
		return nil
	}
	for _, h := range sigV4Headers {
		out.Header.Del(h)
	}
	if cfg.Credentials == nil {
		return errors.New("bedrock: traceforge has no AWS credentials to sign the upstream request with (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, in traceforge's environment)")
	}
	creds, err := cfg.Credentials.Retrieve(out.Context())
	if err != nil {
		return fmt.Errorf("bedrock: traceforge's AWS credentials: %w", err)
	}
	service := scope.Service
	if service == "" {
		service = signingName
	}
	sum := sha256.Sum256(body)
	return v4.NewSigner().SignHTTP(out.Context(), creds, out, hex.EncodeToString(sum[:]), service, region, time.Now())
}

// credentialEnv are the variables the default chain reads: a change of one
// loads the configuration again (tests set them per case).
var credentialEnv = []string{
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
	"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
	"AWS_EC2_METADATA_DISABLED", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
	"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
}

// credentials is traceforge's AWS configuration, loaded once per
// environment.
var credentials configCache

type configCache struct {
	mu  sync.Mutex
	env string
	cfg aws.Config
	err error
	set bool
}

// config returns the configuration config.LoadDefaultConfig loads from
// traceforge's environment (cached: the credentials cache its retrievals).
func (c *configCache) config(ctx context.Context) (aws.Config, error) {
	var key strings.Builder
	for _, k := range credentialEnv {
		key.WriteString(os.Getenv(k))
		key.WriteByte(0)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.set && c.env == key.String() {
		return c.cfg, c.err
	}
	c.cfg, c.err = config.LoadDefaultConfig(context.WithoutCancel(ctx))
	if c.err != nil {
		c.err = fmt.Errorf("bedrock: load traceforge's AWS configuration: %w", c.err)
	}
	c.env, c.set = key.String(), true
	return c.cfg, c.err
}
