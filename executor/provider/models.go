package provider

import (
	"context"
	"fmt"
	"sort"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3/option"
)

// Lister is an optional capability of a Provider: the models its server
// offers (GET /v1/models), for chat's /model picker.
type Lister interface {
	Models(ctx context.Context) ([]string, error)
}

// maxModels bounds the list: a proxy can offer thousands.
const maxModels = 1000

// Models lists the server's models (GET /v1/models), sorted.
func (p *openAIProvider) Models(ctx context.Context) ([]string, error) {
	var capture failureCapture
	pager := p.models.ListAutoPaging(ctx, option.WithMiddleware(capture.middleware))
	var out []string
	for pager.Next() && len(out) < maxModels {
		out = append(out, pager.Current().ID)
	}
	if err := pager.Err(); err != nil {
		return nil, p.s.listError(ctx, &capture, err)
	}
	sort.Strings(out)
	return out, nil
}

// Models lists the server's models (GET /v1/models), newest first as the
// API orders them.
func (p *anthropicProvider) Models(ctx context.Context) ([]string, error) {
	var capture failureCapture
	pager := p.client.Models.ListAutoPaging(ctx, anthropic.ModelListParams{}, aoption.WithMiddleware(capture.middleware))
	var out []string
	for pager.Next() && len(out) < maxModels {
		out = append(out, pager.Current().ID)
	}
	if err := pager.Err(); err != nil {
		return nil, p.s.listError(ctx, &capture, err)
	}
	return out, nil
}

// listError is a failed model listing as one sentence, the key removed.
func (s settings) listError(ctx context.Context, capture *failureCapture, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if capture.status != 0 {
		return fmt.Errorf("the model server at %s did not list its models: %w", s.host(),
			&HTTPError{Provider: s.provider, StatusCode: capture.status, Message: s.redact(serverMessage(capture.body))})
	}
	return fmt.Errorf("the model server at %s did not list its models: %s", s.host(), s.redact(err.Error()))
}

var (
	_ Lister = (*openAIProvider)(nil)
	_ Lister = (*anthropicProvider)(nil)
)
