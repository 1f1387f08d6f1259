package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// anthropicDefaultMaxTokens is sent when Request.MaxTokens is 0: the
// Messages API requires max_tokens.
const anthropicDefaultMaxTokens = 4096

type anthropicProvider struct {
	s      settings
	client anthropic.Client
}

// NewAnthropic returns a provider for the Anthropic Messages API, streaming,
// with tool_use / tool_result blocks.
//
// The key is sent the way this SDK version sends every credential, as
// "Authorization: Bearer <key>" (anthropic-version 2026-10-21); the
// x-api-key header of older API versions is not sent.
func NewAnthropic(o Options) (Provider, error) {
	s, err := resolve(Anthropic, KeyName(Anthropic), o)
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{
		// Without it NewClient walks a credential chain: ANTHROPIC_API_KEY,
		// ANTHROPIC_AUTH_TOKEN, ANTHROPIC_PROFILE, federation variables, a
		// profile file under ~/.config, plus ANTHROPIC_BASE_URL and
		// ANTHROPIC_CUSTOM_HEADERS. hush resolves its own credential.
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(s.httpClient),
		// hush retries itself (Stream), to say so and never after text streamed.
		option.WithMaxRetries(0),
	}
	if s.baseURL != "" {
		opts = append(opts, option.WithBaseURL(s.baseURL))
	}
	if s.apiKey != "" {
		opts = append(opts, option.WithAPIKey(s.apiKey))
	}
	return &anthropicProvider{s: s, client: anthropic.NewClient(opts...)}, nil
}

func (p *anthropicProvider) Name() string { return Anthropic }

func (p *anthropicProvider) Stream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	return p.s.retry(ctx, req.RetryStall, onText, func(onText func(string), a *attempt) (Response, error) {
		return p.streamOnce(ctx, req, onText, a)
	})
}

func (p *anthropicProvider) streamOnce(ctx context.Context, req Request, onText func(string), a *attempt) (Response, error) {
	params, err := p.params(req)
	if err != nil {
		return Response{}, err
	}
	stream := p.client.Messages.NewStreaming(ctx, params, option.WithMiddleware(a.middleware(p.s.firstByte, p.s.idle)))
	defer stream.Close()

	var (
		resp  Response
		text  strings.Builder
		calls = map[int64]*toolCallBuilder{} // by content block index
	)
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "message_start":
			resp.Usage.InputTokens = ev.Message.Usage.InputTokens
			resp.Usage.OutputTokens = ev.Message.Usage.OutputTokens
			resp.Usage.CachedTokens = ev.Message.Usage.CacheReadInputTokens
		case "content_block_start":
			if ev.ContentBlock.Type == "tool_use" {
				calls[ev.Index] = &toolCallBuilder{id: ev.ContentBlock.ID, name: ev.ContentBlock.Name}
			}
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				text.WriteString(ev.Delta.Text)
				if onText != nil && ev.Delta.Text != "" {
					onText(ev.Delta.Text)
				}
			case "input_json_delta":
				if b := calls[ev.Index]; b != nil {
					b.args.WriteString(ev.Delta.PartialJSON)
				}
			}
		case "message_delta":
			if ev.Delta.StopReason != "" {
				resp.StopReason = string(ev.Delta.StopReason)
			}
			// message_delta usage is cumulative for the whole message.
			if in := ev.Usage.InputTokens + ev.Usage.CacheReadInputTokens + ev.Usage.CacheCreationInputTokens; in > 0 {
				resp.Usage.InputTokens = in
				resp.Usage.CachedTokens = ev.Usage.CacheReadInputTokens
			}
			if ev.Usage.OutputTokens > 0 {
				resp.Usage.OutputTokens = ev.Usage.OutputTokens
			}
			if ev.Usage.CacheReadInputTokens > 0 {
				resp.Usage.CachedTokens = ev.Usage.CacheReadInputTokens
			}
		}
	}
	if err := stream.Err(); err != nil {
		return Response{}, p.s.streamError(ctx, a, err, anthropicStreamMessage)
	}
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}

	resp.Text = text.String()
	tcs, err := buildToolCalls(calls, p.Name())
	if err != nil {
		return Response{}, err
	}
	resp.ToolCalls = tcs
	return resp, nil
}

// anthropicStreamMessage recognises an SSE "error" event, which the SDK
// turns into its API error type carrying the stream's 200 status.
func anthropicStreamMessage(err error) (string, bool) {
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		return "", false
	}
	if apiErr.Message != "" {
		return oneLine(apiErr.Message), true
	}
	return serverMessage([]byte(apiErr.RawJSON())), true
}

// params maps a Request to the Messages wire format. Consecutive messages
// that land on the same wire role are merged into one message, because the
// API wants every tool_result answering one assistant turn in a single user
// message, tool results first.
func (p *anthropicProvider) params(req Request) (anthropic.MessageNewParams, error) {
	maxTokens := int64(req.MaxTokens)
	if maxTokens <= 0 {
		maxTokens = anthropicDefaultMaxTokens
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(p.s.model),
		MaxTokens: maxTokens,
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	// turns groups blocks by wire role before they become MessageParams.
	type turn struct {
		assistant bool
		blocks    []anthropic.ContentBlockParamUnion
	}
	var turns []turn
	for i, m := range req.Messages {
		var (
			assistant bool
			blocks    []anthropic.ContentBlockParamUnion
		)
		switch m.Role {
		case RoleUser:
			if m.Text != "" { // the API rejects empty text blocks
				blocks = append(blocks, anthropic.NewTextBlock(m.Text))
			}
		case RoleAssistant:
			assistant = true
			if m.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Text))
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, argsOrEmpty(tc.Args), tc.Name))
			}
		case RoleTool:
			result := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
			if m.Text != "" {
				result.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: m.Text}}}
			}
			if m.IsError {
				result.IsError = anthropic.Bool(true)
			}
			blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolResult: &result})
		default:
			return params, fmt.Errorf("anthropic: message %d has unknown role %q", i, m.Role)
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(turns); n > 0 && turns[n-1].assistant == assistant {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			continue
		}
		turns = append(turns, turn{assistant: assistant, blocks: blocks})
	}
	for _, t := range turns {
		if t.assistant {
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(t.blocks...))
		} else {
			params.Messages = append(params.Messages, anthropic.NewUserMessage(t.blocks...))
		}
	}
	for _, spec := range req.Tools {
		schema, err := schemaObject(spec)
		if err != nil {
			return params, fmt.Errorf("anthropic: %w", err)
		}
		input := anthropic.ToolInputSchemaParam{ExtraFields: map[string]any{}}
		for k, v := range schema {
			switch k {
			case "type": // always "object"; the SDK writes it
			case "properties":
				input.Properties = v
			case "required":
				req, err := stringList(v)
				if err != nil {
					return params, fmt.Errorf("anthropic: tool %s: schema required: %w", spec.Name, err)
				}
				input.Required = req
			default:
				input.ExtraFields[k] = v
			}
		}
		tool := anthropic.ToolParam{Name: spec.Name, InputSchema: input}
		if spec.Description != "" {
			tool.Description = anthropic.String(spec.Description)
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	return params, nil
}

// stringList converts a decoded JSON array of strings.
func stringList(v any) ([]string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out []string
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, errors.New("not an array of strings")
	}
	return out, nil
}
