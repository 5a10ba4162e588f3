package harness

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/traceforge/traceforge/bench/gen"
	"github.com/traceforge/traceforge/internal/fakeupstream"
)

// BenchAWS are the dummy AWS credentials of the Bedrock rows: the load
// signs its Bedrock calls with them, record holds them to sign each call
// again for the upstream (recordAWSEnv), and the fake Bedrock
// (FakeBedrock) accepts no other signature.
var BenchAWS = aws.Credentials{AccessKeyID: "AKIDTFBENCHDUMMY", SecretAccessKey: "tfbench-dummy-secret"}

// BenchRegion is the region the Bedrock calls are signed for; the fake
// Bedrock accepts no other.
const BenchRegion = "us-east-1"

// bedrockService is Bedrock runtime's SigV4 signing name.
const bedrockService = "bedrock"

// FakeBedrock is the fake Bedrock runtime of the record rows
// (fakeupstream.Bedrock): it checks every request's SigV4 signature
// against BenchAWS and BenchRegion.
func FakeBedrock() http.Handler {
	return fakeupstream.NewBedrock(fakeupstream.BedrockOptions{AccessKeyID: BenchAWS.AccessKeyID, SecretAccessKey: BenchAWS.SecretAccessKey, Region: BenchRegion})
}

// SignSigV4 returns r signed with AWS SigV4 (BenchAWS, BenchRegion, the
// bedrock service) for host at the time at, as the AWS SDKs sign a call:
// its headers plus X-Amz-Date and Authorization, over the escaped path,
// the headers and the body's SHA-256.
func SignSigV4(host string, r gen.Request, at time.Time) (gen.Request, error) {
	req, err := http.NewRequest(http.MethodPost, "http://"+host+r.Path, bytes.NewReader(r.Body))
	if err != nil {
		return r, err
	}
	req.Header = r.Header.Clone()
	sum := sha256.Sum256(r.Body)
	if err := v4.NewSigner().SignHTTP(context.Background(), BenchAWS, req, hex.EncodeToString(sum[:]), bedrockService, BenchRegion, at); err != nil {
		return r, err
	}
	r.Header = req.Header
	return r, nil
}

// KindRaw is the raw request of call i of kind for host (RawRequest with
// extra), signed for host now when the kind's calls are signed
// (gen.Kind.NeedsSigV4).
func KindRaw(host string, kind gen.Kind, i int, stream bool, extra http.Header) []byte {
	r := kind.HTTPRequest(i, stream)
	if kind.NeedsSigV4() {
		var err error
		if r, err = SignSigV4(host, r, time.Now()); err != nil {
			panic(err) // a generated request for a host:port always signs
		}
	}
	return RawRequest(host, r, extra)
}

// recordAWSEnv is record's AWS environment for the Bedrock rows:
// BenchAWS and BenchRegion, and nothing read from the machine's AWS
// profile, shared files or instance metadata.
func recordAWSEnv() []string {
	none := filepath.Join(os.TempDir(), "tfbench-no-aws-config")
	return []string{
		"AWS_ACCESS_KEY_ID=" + BenchAWS.AccessKeyID, "AWS_SECRET_ACCESS_KEY=" + BenchAWS.SecretAccessKey,
		"AWS_SESSION_TOKEN=", "AWS_PROFILE=", "AWS_REGION=" + BenchRegion,
		"AWS_CONFIG_FILE=" + none, "AWS_SHARED_CREDENTIALS_FILE=" + none, "AWS_EC2_METADATA_DISABLED=true",
	}
}
