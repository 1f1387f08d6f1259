package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// openAIDefaultBaseURL is used when Options.BaseURL is "". It is set
// explicitly because the service is built without the SDK's defaults.
const openAIDefaultBaseURL = "https://api.openai.com/v1/"

type openAIProvider struct {
	s           settings
	completions openai.ChatCompletionService
	models      openai.ModelService
}

// NewOpenAI returns a provider for the OpenAI Chat Completions API or any
// server that speaks it (vLLM, llama.cpp, Ollama, LM Studio, ...), streaming,
// with function tools.
func NewOpenAI(o Options) (Provider, error) {
	s, err := resolve(OpenAI, KeyName(OpenAI), o)
	if err != nil {
		return nil, err
	}
	base := s.baseURL
	if base == "" {
		base = openAIDefaultBaseURL
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(s.httpClient),
		// hush retries itself (Stream), to say so and never after text streamed.
		option.WithMaxRetries(0),
	}
	if s.apiKey != "" {
		opts = append(opts, option.WithAPIKey(s.apiKey))
	}
	// Not openai.NewClient: it always applies DefaultClientOptions, which read
	// OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID, OPENAI_PROJECT_ID and
	// OPENAI_CUSTOM_HEADERS from the process environment, and openai-go offers
	// no public switch to turn that off (its marker is internal). Building
	// the one service we use from our own options reads nothing ambient.
	return &openAIProvider{s: s, completions: openai.NewChatCompletionService(opts...), models: openai.NewModelService(opts...)}, nil
}

func (p *openAIProvider) Name() string { return OpenAI }

func (p *openAIProvider) Stream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	return p.s.retry(ctx, req.RetryStall, onText, func(onText func(string), a *attempt) (Response, error) {
		return p.streamOnce(ctx, req, onText, a)
	})
}

func (p *openAIProvider) streamOnce(ctx context.Context, req Request, onText func(string), a *attempt) (Response, error) {
	params, err := p.params(req)
	if err != nil {
		return Response{}, err
	}
	stream := p.completions.NewStreaming(ctx, params, option.WithMiddleware(a.middleware(p.s.firstByte, p.s.idle)))
	defer stream.Close()

	var (
		resp  Response
		text  strings.Builder
		calls = map[int64]*toolCallBuilder{}
	)
	for stream.Next() {
		chunk := stream.Current()
		if chunk.JSON.Usage.Valid() {
			resp.Usage = openAIUsage(chunk.Usage)
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 { // hush never asks for n > 1
				continue
			}
			if d := choice.Delta.Content; d != "" {
				text.WriteString(d)
				if onText != nil {
					onText(d)
				}
			}
			for _, tc := range choice.Delta.ToolCalls {
				b := calls[tc.Index]
				if b == nil {
					b = &toolCallBuilder{}
					calls[tc.Index] = b
				}
				// Some compatible servers repeat id and name in every delta;
				// the first value wins, arguments are concatenated.
				if b.id == "" {
					b.id = tc.ID
				}
				if b.name == "" {
					b.name = tc.Function.Name
				}
				b.args.WriteString(tc.Function.Arguments)
			}
			if choice.FinishReason != "" {
				resp.StopReason = choice.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		return Response{}, p.s.streamError(ctx, a, err, openAIStreamMessage)
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

// openAIUsage reads the usage chunk, with usage.cost where a server (an
// OpenRouter-style proxy) reports what the call cost.
func openAIUsage(u openai.CompletionUsage) Usage {
	out := Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CachedTokens: u.PromptTokensDetails.CachedTokens}
	if f, ok := u.JSON.ExtraFields["cost"]; ok {
		var cost float64
		if json.Unmarshal([]byte(f.Raw()), &cost) == nil && cost > 0 {
			out.CostUSD = cost
		}
	}
	return out
}

// openAIStreamMessage recognises an error event inside the SSE stream.
func openAIStreamMessage(err error) (string, bool) {
	var se *ssestream.StreamError
	if !errors.As(err, &se) {
		return "", false
	}
	return serverMessage(se.Event.Data), true
}

// params maps a Request to the Chat Completions wire format.
func (p *openAIProvider) params(req Request) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{
		Model: shared.ChatModel(p.s.model),
		// Usage arrives in a final chunk only when asked for.
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	if req.MaxTokens > 0 {
		// max_tokens is deprecated and rejected by reasoning models.
		params.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			params.Messages = append(params.Messages, openai.UserMessage(m.Text))
		case RoleAssistant:
			var a openai.ChatCompletionAssistantMessageParam
			if m.Text != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = param.NewOpt(m.Text)
			}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name:      tc.Name,
							Arguments: string(argsOrEmpty(tc.Args)),
						},
					},
				})
			}
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case RoleTool:
			text := m.Text
			if m.IsError && !strings.HasPrefix(text, "error: ") && !strings.HasPrefix(text, "denied: ") {
				// Chat Completions has no is_error flag; say it in the text so
				// the model does not mistake a failure for output (a text
				// that already says so is not said twice).
				text = "error: " + text
			}
			params.Messages = append(params.Messages, openai.ToolMessage(text, m.ToolCallID))
		default:
			return params, fmt.Errorf("openai: message %d has unknown role %q", i, m.Role)
		}
	}
	for _, spec := range req.Tools {
		schema, err := schemaObject(spec)
		if err != nil {
			return params, fmt.Errorf("openai: %w", err)
		}
		fn := shared.FunctionDefinitionParam{Name: spec.Name, Parameters: shared.FunctionParameters(schema)}
		if spec.Description != "" {
			fn.Description = param.NewOpt(spec.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	return params, nil
}
