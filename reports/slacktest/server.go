// Package slacktest runs a fake Slack for tests, as net/http/httptest runs
// a server: the part of the Web API that reports' bot notifier calls
// through slack-go (chat.postMessage, then files.getUploadURLExternal, the
// upload to the URL it hands out, files.completeUploadExternal) and an
// incoming webhook. A test points the client at it and reads back what
// Slack got:
//
//	s := slacktest.NewServer(t)
//	n := reports.NewBotNotifier(token, "#recon", policy, s.Option())
//	…
//	posts := s.OK(slacktest.PostMessage)
//
// It answers as Slack does: form-encoded calls answered with JSON, a call
// without a token refused with not_authed, the file taken as a multipart
// upload. Canned replies make it misbehave: an HTTP status (5xx, 429 with
// Retry-After), an answer held back past the client's timeout, or Slack's
// own {"ok":false} refusal (invalid_auth, channel_not_found).
package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

// The paths the server answers; each is a key of Queue, Always, Calls and
// OK.
const (
	PostMessage    = "/chat.postMessage"
	GetUploadURL   = "/files.getUploadURLExternal"
	Upload         = "/upload/abc" // the upload URL GetUploadURL hands out
	CompleteUpload = "/files.completeUploadExternal"
	Webhook        = "/services/T0/B0/secret" // an incoming webhook; see WebhookURL
)

// What the server answers with.
const (
	// ChannelID is the channel chat.postMessage says it posted in.
	ChannelID = "C123"
	// TS is the timestamp of every message posted.
	TS = "1764370800.000100"
	// FileID is the id of every file uploaded.
	FileID = "F123"
)

// Reply is a canned answer given instead of the normal one.
type Reply struct {
	// Status is the HTTP status to answer with; 0 means 200.
	Status int
	// RetryAfter is the Retry-After header, when set (with a 429).
	RetryAfter string
	// Delay holds the request this long before answering; a client that
	// gives up first is recorded with status 0.
	Delay time.Duration
	// Error, with a 200, is the error of Slack's {"ok":false} answer, as
	// Slack refuses a call it understood: invalid_auth, channel_not_found.
	Error string
}

// Call is one request the server had.
type Call struct {
	Path string
	// Status is what the server answered; 0 when the client gave up first.
	Status int
	// OK says the call did what it asked: a message posted, a file
	// uploaded or shared, a webhook delivered.
	OK bool
	// Error is the error of an {"ok":false} answer.
	Error string
	// Form is the call's form, each field's first value (Web API methods).
	Form map[string]string
	// Body is the file uploaded (Upload) or the JSON posted (Webhook).
	Body []byte
}

// Server is a fake Slack. Its methods may be called while a client is
// talking to it.
type Server struct {
	// URL is the server's base URL; Option points slack-go at it.
	URL string

	t   testing.TB
	srv *httptest.Server

	mu     sync.Mutex
	calls  []Call
	queue  map[string][]Reply
	always map[string]Reply
}

// NewServer starts a server, closed when t ends. It answers every call
// normally until told otherwise.
func NewServer(t testing.TB) *Server {
	s := &Server{t: t, queue: map[string][]Reply{}, always: map[string]Reply{}}
	mux := http.NewServeMux()
	for _, path := range []string{PostMessage, GetUploadURL, CompleteUpload} {
		mux.HandleFunc("POST "+path, s.method)
	}
	mux.HandleFunc("POST "+Upload, s.upload)
	mux.HandleFunc("POST "+Webhook, s.webhook)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("slacktest: unexpected call %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	})
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Option is the slack-go option that sends a client's calls here.
func (s *Server) Option() slack.Option { return slack.OptionAPIURL(s.URL + "/") }

// WebhookURL is the URL of the server's incoming webhook. Its last part
// stands for the secret a real one carries.
func (s *Server) WebhookURL() string { return s.URL + Webhook }

// Queue adds replies that calls of path get, one each, in order, before
// it answers normally again.
func (s *Server) Queue(path string, replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue[path] = append(s.queue[path], replies...)
}

// Always makes every call of path get r, queued replies or not.
func (s *Server) Always(path string, r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.always[path] = r
}

// Calls is every request the server had, in the order they came.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// OK is the calls of path that did what they asked, in order.
func (s *Server) OK(path string) []Call {
	var ok []Call
	for _, c := range s.Calls() {
		if c.Path == path && c.OK {
			ok = append(ok, c)
		}
	}
	return ok
}

// Count is how many calls of path the server had, and how many of them
// did what they asked.
func (s *Server) Count(path string) (calls, ok int) {
	for _, c := range s.Calls() {
		if c.Path == path {
			calls++
			if c.OK {
				ok++
			}
		}
	}
	return calls, ok
}

func (s *Server) record(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
}

// next is the canned reply for a call of path, if any.
func (s *Server) next(path string) (Reply, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.always[path]; ok {
		return r, true
	}
	if q := s.queue[path]; len(q) > 0 {
		s.queue[path] = q[1:]
		return q[0], true
	}
	return Reply{}, false
}

// failed gives the call its canned reply when that is a failure, holding
// it first when the reply says so, and records it; false means the call
// is to be answered normally (or with an {"ok":false} refusal, rep.Error).
func (s *Server) failed(w http.ResponseWriter, r *http.Request, c Call, rep Reply) bool {
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			s.record(c)
			return true
		}
	}
	if rep.Status == 0 || rep.Status == http.StatusOK {
		return false
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	c.Status = rep.Status
	s.record(c)
	http.Error(w, http.StatusText(rep.Status), rep.Status)
	return true
}

// method answers a Web API method: the form read, the token checked, a
// canned reply given, or else what Slack answers when the call works.
func (s *Server) method(w http.ResponseWriter, r *http.Request) {
	c := Call{Path: r.URL.Path, Form: map[string]string{}}
	if err := r.ParseForm(); err != nil {
		s.t.Errorf("slacktest: %s: %v", r.URL.Path, err)
	}
	for k := range r.PostForm {
		c.Form[k] = r.PostForm.Get(k)
	}
	rep, _ := s.next(c.Path)
	if s.failed(w, r, c, rep) {
		return
	}
	c.Status = http.StatusOK
	if rep.Error == "" && c.Form["token"] == "" {
		rep.Error = "not_authed"
	}
	if rep.Error != "" {
		c.Error = rep.Error
		s.record(c)
		s.reply(w, map[string]any{"ok": false, "error": rep.Error})
		return
	}
	c.OK = true
	s.record(c)
	switch c.Path {
	case PostMessage:
		s.reply(w, map[string]any{"ok": true, "channel": ChannelID, "ts": TS})
	case GetUploadURL:
		s.reply(w, map[string]any{"ok": true, "upload_url": s.URL + Upload, "file_id": FileID})
	case CompleteUpload:
		s.reply(w, map[string]any{"ok": true, "files": []map[string]any{{"id": FileID, "title": "review"}}})
	}
}

func (s *Server) reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		s.t.Errorf("slacktest: %v", err)
	}
}

// upload takes the file posted to the upload URL, as a multipart form.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	c := Call{Path: r.URL.Path}
	rep, _ := s.next(c.Path)
	if rep.Status != 0 && rep.Status != http.StatusOK {
		io.Copy(io.Discard, r.Body)
	}
	if s.failed(w, r, c, rep) {
		return
	}
	file, _, err := r.FormFile("file")
	if err != nil {
		s.t.Errorf("slacktest: upload: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	defer file.Close()
	if c.Body, err = io.ReadAll(file); err != nil {
		s.t.Errorf("slacktest: upload: %v", err)
	}
	c.Status, c.OK = http.StatusOK, true
	s.record(c)
	fmt.Fprintf(w, "OK - %d", len(c.Body))
}

// webhook takes a message posted to the incoming webhook, as JSON.
func (s *Server) webhook(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("slacktest: webhook: %v", err)
	}
	c := Call{Path: r.URL.Path, Body: body}
	rep, _ := s.next(c.Path)
	if s.failed(w, r, c, rep) {
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		c.Status = http.StatusBadRequest
		s.record(c)
		http.Error(w, "invalid_payload", http.StatusBadRequest)
		return
	}
	c.Status, c.OK = http.StatusOK, true
	s.record(c)
	io.WriteString(w, "ok")
}
