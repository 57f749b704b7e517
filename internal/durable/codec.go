package durable

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/deepresearch/deepresearch/internal/config"
)

// PayloadKeyEnv is the environment variable holding the payload keys: one or more base64-encoded 32-byte AES keys,
// separated by commas, newest first. Payloads are encrypted with the first; any of them decrypts.
const PayloadKeyEnv = config.PayloadKeyEnv

// Metadata of an encrypted payload.
const (
	// EncodingEncrypted is the "encoding" of an encrypted payload.
	EncodingEncrypted = "binary/encrypted"
	// MetaKeyID names the key a payload was encrypted with: the first 8 bytes of the key's SHA-256, in hex.
	MetaKeyID = "encryption-key-id"
	// MetaCipher names the cipher.
	MetaCipher = "encryption-cipher"
	cipherName = "AES256-GCM"
)

// ErrPayloadKey is a payload key variable that cannot be used.
var ErrPayloadKey = errors.New("payload key")

// maxPayloadKeys bounds the keys one variable holds.
const maxPayloadKeys = 8

type payloadKey struct {
	id   string
	aead cipher.AEAD
}

// PayloadCodec encrypts every payload the Temporal client sends (workflow inputs and results, activity arguments
// and results, queries, failures' details) with AES-256-GCM, so that the workflow history holds no question, plan
// or document in clear. It decrypts with whichever of its keys the payload names; a payload in clear passes
// through, so history written before the codec was turned on stays readable. With no keys it encrypts nothing
// and refuses an encrypted payload with an error saying so.
type PayloadCodec struct {
	keys []payloadKey
}

var _ converter.PayloadCodec = (*PayloadCodec)(nil)

// ParsePayloadKeys reads the value of PayloadKeyEnv ("" is no key). The error never quotes key material.
func ParsePayloadKeys(value string) (*PayloadCodec, error) {
	c := &PayloadCodec{}
	if strings.TrimSpace(value) == "" {
		return c, nil
	}
	parts := strings.Split(value, ",")
	if len(parts) > maxPayloadKeys {
		return nil, fmt.Errorf("%w: $%s holds %d keys; at most %d", ErrPayloadKey, PayloadKeyEnv, len(parts), maxPayloadKeys)
	}
	seen := map[string]bool{}
	for i, p := range parts {
		p = strings.TrimSpace(p)
		raw, err := base64.StdEncoding.DecodeString(p)
		if err != nil {
			raw, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(p, "="))
		}
		switch {
		case p == "":
			return nil, fmt.Errorf("%w: $%s: key %d is empty", ErrPayloadKey, PayloadKeyEnv, i+1)
		case err != nil:
			return nil, fmt.Errorf("%w: $%s: key %d is not base64", ErrPayloadKey, PayloadKeyEnv, i+1)
		case len(raw) != 32:
			return nil, fmt.Errorf("%w: $%s: key %d is %d bytes; want 32 (openssl rand -base64 32)", ErrPayloadKey, PayloadKeyEnv, i+1, len(raw))
		}
		k, err := newPayloadKey(raw)
		if err != nil {
			return nil, err
		}
		if seen[k.id] {
			return nil, fmt.Errorf("%w: $%s: key %d repeats an earlier one", ErrPayloadKey, PayloadKeyEnv, i+1)
		}
		seen[k.id] = true
		c.keys = append(c.keys, k)
	}
	return c, nil
}

func newPayloadKey(raw []byte) (payloadKey, error) {
	block, err := aes.NewCipher(raw)
	if err != nil {
		return payloadKey{}, fmt.Errorf("%w: %v", ErrPayloadKey, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return payloadKey{}, fmt.Errorf("%w: %v", ErrPayloadKey, err)
	}
	sum := sha256.Sum256(raw)
	return payloadKey{id: hex.EncodeToString(sum[:8]), aead: aead}, nil
}

// Encrypts reports whether the codec has a key to encrypt with.
func (c *PayloadCodec) Encrypts() bool { return len(c.keys) > 0 }

// KeyID is the id of the key payloads are encrypted with ("" without keys).
func (c *PayloadCodec) KeyID() string {
	if len(c.keys) == 0 {
		return ""
	}
	return c.keys[0].id
}

// DataConverter is the SDK's default converter with this codec around it, for client.Options.DataConverter.
// Workflow code decodes with a converter that panics on a payload it cannot decrypt: the engine then fails the
// workflow task (logged by the worker, recorded in the history) and retries it until a worker with the key takes
// it, instead of the run failing on the first worker with a wrong key.
func (c *PayloadCodec) DataConverter() converter.DataConverter {
	return contextAware{converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)}
}

// ErrUndecryptable is a payload this process's keys cannot decrypt.
var ErrUndecryptable = errors.New("payload cannot be decrypted")

type contextAware struct{ converter.DataConverter }

var _ workflow.ContextAware = contextAware{}

func (c contextAware) WithWorkflowContext(workflow.Context) converter.DataConverter {
	return blocking(c)
}

func (c contextAware) WithContext(context.Context) converter.DataConverter { return c.DataConverter }

// blocking is the converter of workflow code: a payload it cannot decrypt blocks the workflow task.
type blocking struct{ converter.DataConverter }

func (b blocking) FromPayload(p *commonpb.Payload, v any) error {
	return block(b.DataConverter.FromPayload(p, v))
}

func (b blocking) FromPayloads(ps *commonpb.Payloads, vs ...any) error {
	return block(b.DataConverter.FromPayloads(ps, vs...))
}

func block(err error) error {
	if errors.Is(err, ErrUndecryptable) {
		panic(err)
	}
	return err
}

// Encode encrypts each payload with the newest key.
func (c *PayloadCodec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	if len(c.keys) == 0 {
		return payloads, nil
	}
	k := c.keys[0]
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := p.Marshal()
		if err != nil {
			return nil, fmt.Errorf("durable: encrypt payload: %w", err)
		}
		nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plain)+k.aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return nil, fmt.Errorf("durable: encrypt payload: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(EncodingEncrypted),
				MetaKeyID: []byte(k.id), MetaCipher: []byte(cipherName)},
			Data: k.aead.Seal(nonce, nonce, plain, []byte(k.id)),
		}
	}
	return out, nil
}

// Decode decrypts each encrypted payload with the key it names; payloads in clear pass through.
func (c *PayloadCodec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != EncodingEncrypted {
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[MetaKeyID])
		if len(c.keys) == 0 {
			return nil, fmt.Errorf("durable: %w: encrypted with key %s: set $%s to decrypt it", ErrUndecryptable, id, PayloadKeyEnv)
		}
		var k *payloadKey
		for j := range c.keys {
			if c.keys[j].id == id {
				k = &c.keys[j]
			}
		}
		if k == nil {
			return nil, fmt.Errorf("durable: %w: encrypted with key %s, which is not among the %d key(s) of $%s (ids %s)",
				ErrUndecryptable, id, len(c.keys), PayloadKeyEnv, c.keyIDs())
		}
		if cp := string(p.GetMetadata()[MetaCipher]); cp != cipherName {
			return nil, fmt.Errorf("durable: payload encrypted with cipher %q; this program knows %s", cp, cipherName)
		}
		ns := k.aead.NonceSize()
		if len(p.GetData()) < ns+k.aead.Overhead() {
			return nil, fmt.Errorf("durable: encrypted payload of %d bytes is too short", len(p.GetData()))
		}
		plain, err := k.aead.Open(nil, p.GetData()[:ns], p.GetData()[ns:], []byte(id))
		if err != nil {
			return nil, fmt.Errorf("durable: %w: key %s: authentication failed (damaged or forged)", ErrUndecryptable, id)
		}
		var dp commonpb.Payload
		if err := dp.Unmarshal(plain); err != nil {
			return nil, fmt.Errorf("durable: decrypted payload: %w", err)
		}
		out[i] = &dp
	}
	return out, nil
}

func (c *PayloadCodec) keyIDs() string {
	ids := make([]string, len(c.keys))
	for i, k := range c.keys {
		ids[i] = k.id
	}
	return strings.Join(ids, ", ")
}
