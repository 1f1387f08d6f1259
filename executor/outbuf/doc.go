// Package outbuf owns the shaping of tool output for its readers: making it
// safe to print on a terminal ([Sanitize], [NewSanitizeWriter]) and bounding
// how much of it the model sees ([HeadTail]).
//
// Neither part may let tool output reach the user's terminal as anything but
// text: no escape sequence, C1 control or stray control character survives
// sanitising, so a tool cannot set the window title, move the cursor, write
// the clipboard (OSC 52) or plant a hyperlink. Memory must never grow with
// the size of the output: a HeadTail keeps a fixed head and tail, and the
// sanitiser keeps a few bytes of state.
//
// This package does not redact secrets; executor/redact does. Sanitise
// before redacting, not after: an escape sequence inside a value — grep
// --color highlighting part of a token — hides it from the redactor, and
// removing the sequence afterwards would join the value up again on the
// screen. Sanitised text has no sequences left to hide anything in, and
// the redactor's placeholders are plain text, so sanitise → redact is safe
// for the terminal, the model and the transcript alike. A HeadTail goes after
// the redactor: cut first, a value split at a cut would no longer match.
package outbuf
