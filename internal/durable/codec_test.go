package durable

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/research"
)

func newKey(t testing.TB) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

func mustCodec(t testing.TB, value string) *PayloadCodec {
	t.Helper()
	c, err := ParsePayloadKeys(value)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A key variable that cannot be used is refused at start with what is wrong, and never with the key itself.
func TestParsePayloadKeysRefusesBadKeys(t *testing.T) {
	good := newKey(t)
	short := base64.StdEncoding.EncodeToString([]byte("sixteen byte key"))
	cases := []struct {
		name, value, want string
	}{
		{"short", short, "key 1 is 16 bytes; want 32"},
		{"not base64", "not*base64*at*all!!", "key 1 is not base64"},
		{"long", base64.StdEncoding.EncodeToString(make([]byte, 48)), "key 1 is 48 bytes"},
		{"second bad", good + "," + short, "key 2 is 16 bytes"},
		{"empty in list", good + ",,", "key 2 is empty"},
		{"repeated", good + ", " + good, "key 2 repeats"},
		{"too many", strings.Repeat(good+",", 8) + good, "holds 9 keys"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParsePayloadKeys(c.value)
			if err == nil || !errors.Is(err, ErrPayloadKey) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if strings.Contains(err.Error(), good) || strings.Contains(err.Error(), short) || !strings.Contains(err.Error(), PayloadKeyEnv) {
				t.Errorf("the error quotes a key or does not name the variable: %v", err)
			}
		})
	}
	// Both base64 alphabets, padded or not.
	raw := make([]byte, 32)
	raw[0] = 0xfb // '+' or '-' in the first character
	for _, v := range []string{base64.StdEncoding.EncodeToString(raw), base64.URLEncoding.EncodeToString(raw), base64.RawURLEncoding.EncodeToString(raw)} {
		if c, err := ParsePayloadKeys(v); err != nil || !c.Encrypts() {
			t.Errorf("%q: %v", v, err)
		}
	}
	if c := mustCodec(t, "  "); c.Encrypts() {
		t.Error("an empty variable encrypts")
	}
}

func payload(t *testing.T, v any) *commonpb.Payload {
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Payloads come out encrypted (nothing of the text in clear, the metadata naming the key and cipher) and go back
// to what went in; rotation: a codec whose list has a new key first encrypts with it and still decrypts what the
// old key encrypted; a codec without the key refuses, naming the key it lacks; a changed byte is refused.
func TestPayloadCodecRoundTripAndRotation(t *testing.T) {
	secret := "What is known about the merger of Initech and Globex?"
	oldKey, newKey := newKey(t), newKey(t)
	old := mustCodec(t, oldKey)
	enc, err := old.Encode([]*commonpb.Payload{payload(t, Input{Request: request.Research{RunID: "r1", Question: secret}}), payload(t, nil)})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range enc {
		if bytes.Contains(p.GetData(), []byte("Initech")) || string(p.GetMetadata()[converter.MetadataEncoding]) != EncodingEncrypted ||
			string(p.GetMetadata()[MetaKeyID]) != old.KeyID() || string(p.GetMetadata()[MetaCipher]) != "AES256-GCM" {
			t.Fatalf("encrypted payload: metadata %q, data in clear %v", p.GetMetadata(), bytes.Contains(p.GetData(), []byte("Initech")))
		}
	}
	// Two encryptions of one payload differ (a fresh nonce each).
	again, _ := old.Encode([]*commonpb.Payload{payload(t, Input{Request: request.Research{RunID: "r1", Question: secret}})})
	if bytes.Equal(again[0].GetData(), enc[0].GetData()) {
		t.Error("the same payload encrypted twice gave the same bytes")
	}

	rotated := mustCodec(t, newKey+","+oldKey)
	dec, err := rotated.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	var in Input
	if err := converter.GetDefaultDataConverter().FromPayload(dec[0], &in); err != nil || in.Request.Question != secret {
		t.Fatalf("decoded %+v, %v", in, err)
	}
	if re, _ := rotated.Encode(dec[:1]); string(re[0].GetMetadata()[MetaKeyID]) != rotated.KeyID() || rotated.KeyID() == old.KeyID() {
		t.Errorf("the rotated codec encrypts with key %s, want the newest %s", re[0].GetMetadata()[MetaKeyID], rotated.KeyID())
	}

	onlyNew := mustCodec(t, newKey)
	if _, err := onlyNew.Decode(enc); err == nil || !strings.Contains(err.Error(), old.KeyID()) || !strings.Contains(err.Error(), "not among") {
		t.Errorf("a codec without the old key: %v", err)
	}
	if _, err := mustCodec(t, "").Decode(enc); err == nil || !strings.Contains(err.Error(), "set $"+PayloadKeyEnv) {
		t.Errorf("a codec without keys: %v", err)
	}
	tampered := &commonpb.Payload{Metadata: enc[0].GetMetadata(), Data: bytes.Clone(enc[0].GetData())}
	tampered.Data[len(tampered.Data)-1] ^= 1
	if _, err := old.Decode([]*commonpb.Payload{tampered}); err == nil || !strings.Contains(err.Error(), "authentication failed") {
		t.Errorf("a tampered payload: %v", err)
	}
	// A key id swapped onto another key's payload is refused too: the id is authenticated.
	swapped := &commonpb.Payload{Metadata: map[string][]byte{}, Data: enc[0].GetData()}
	for k, v := range enc[0].GetMetadata() {
		swapped.Metadata[k] = v
	}
	swapped.Metadata[MetaKeyID] = []byte(rotated.KeyID())
	if _, err := rotated.Decode([]*commonpb.Payload{swapped}); err == nil {
		t.Error("a payload relabelled with another key's id was decrypted")
	}
	// Payloads in clear (history from before the codec) pass through.
	clear := payload(t, "plain")
	if out, err := old.Decode([]*commonpb.Payload{clear}); err != nil || out[0] != clear {
		t.Errorf("a payload in clear: %v", err)
	}
}

// The whole workflow runs with the codec as its data converter: every input, result and local activity's
// payload goes through it and back.
func TestWorkflowWithPayloadCodec(t *testing.T) {
	f := newFixture(t)
	codec := mustCodec(t, newKey(t))
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetDataConverter(codec.DataConverter())
	register(env, f.activities(t), nil)
	env.ExecuteWorkflow(WorkflowName, Input{Request: request.Research{RunID: "enc", Question: question}})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var rep research.Report
	if err := env.GetWorkflowResult(&rep); err != nil || rep.Stats.EvidenceAccepted == 0 || len(rep.Citations) == 0 {
		t.Fatalf("report through the codec: %v, %d evidence, %d citations", err, rep.Stats.EvidenceAccepted, len(rep.Citations))
	}
}

// Decode takes whatever a history holds: any payload, encrypted-looking or not, is decoded or refused with an
// error, never a panic.
func FuzzPayloadDecode(f *testing.F) {
	c := mustCodec(f, newKey(f))
	enc, _ := c.Encode([]*commonpb.Payload{{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`"x"`)}})
	f.Add([]byte(EncodingEncrypted), []byte(c.KeyID()), []byte("AES256-GCM"), enc[0].GetData())
	f.Add([]byte(EncodingEncrypted), []byte(c.KeyID()), []byte("AES256-GCM"), []byte{1, 2, 3})
	f.Add([]byte("json/plain"), []byte(nil), []byte(nil), []byte(`{}`))
	f.Fuzz(func(t *testing.T, encoding, id, cipher, data []byte) {
		p := &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: encoding, MetaKeyID: id, MetaCipher: cipher}, Data: data}
		out, err := c.Decode([]*commonpb.Payload{p})
		if err == nil && len(out) != 1 {
			t.Fatalf("decoded %d payloads from 1", len(out))
		}
	})
}

// The key variable is read from the environment: any value is parsed or refused, never a panic; a value taken
// encrypts and decrypts.
func FuzzParsePayloadKeys(f *testing.F) {
	f.Add(newKey(f))
	f.Add(newKey(f) + "," + newKey(f))
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, v string) {
		c, err := ParsePayloadKeys(v)
		if err != nil {
			return
		}
		p := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`"x"`)}
		enc, err := c.Encode([]*commonpb.Payload{p})
		if err != nil {
			t.Fatal(err)
		}
		dec, err := c.Decode(enc)
		if err != nil || string(dec[0].GetData()) != `"x"` {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// BenchmarkPayloadCodec encrypts and decrypts one payload of a read's size (a 64 KiB document text).
func BenchmarkPayloadCodec(b *testing.B) {
	c := mustCodec(b, newKey(b))
	p := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: bytes.Repeat([]byte("evidence "), 64<<10/9)}
	b.SetBytes(int64(len(p.Data)))
	for b.Loop() {
		enc, err := c.Encode([]*commonpb.Payload{p})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}
