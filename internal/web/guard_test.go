package web

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestGuard: DNS rebinding (Host, Origin) and CSRF (cross-site state
// changes) are refused; the app's own requests and native clients pass.
func TestGuard(t *testing.T) {
	e := newEnv(t, envOptions{})
	port := e.url[strings.LastIndex(e.url, ":")+1:]
	tests := []struct {
		name   string
		method string
		hdr    []string
		want   int
	}{
		{"native client", "POST", nil, http.StatusCreated},
		{"same origin", "POST", []string{"Origin", e.url, "Sec-Fetch-Site", "same-origin"}, http.StatusCreated},
		{"localhost by name", "POST", []string{"Host", "localhost:" + port}, http.StatusCreated},
		{"rebound host", "POST", []string{"Host", "evil.example:" + port}, http.StatusForbidden},
		{"rebound host, read", "GET", []string{"Host", "evil.example:" + port}, http.StatusForbidden},
		{"other port", "GET", []string{"Host", "127.0.0.1:1"}, http.StatusForbidden},
		{"foreign origin", "POST", []string{"Origin", "http://evil.example"}, http.StatusForbidden},
		{"cross-site fetch", "POST", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"cross-site read", "GET", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			path := "/v1/chats"
			if tt.method == "POST" {
				body = map[string]any{}
			}
			var eb errorBody
			got := e.do(tt.method, path, body, &eb, tt.hdr...)
			if got != tt.want {
				t.Errorf("got %d %+v, want %d", got, eb, tt.want)
			}
			if got == http.StatusForbidden && eb.Error.Code != codeForbidden {
				t.Errorf("got error %+v", eb)
			}
		})
	}
}

func TestToken(t *testing.T) {
	const token = "tok-7d1c2a-0000000000000000000000000000000000"
	e := newEnv(t, envOptions{token: token})
	var eb errorBody
	if got := e.doAuth("", "GET", "/v1/packs", nil, &eb); got != http.StatusUnauthorized || eb.Error.Code != codeUnauthorized {
		t.Errorf("without the token: got %d %+v", got, eb)
	}
	if got := e.doAuth("Bearer wrong", "GET", "/v1/packs", nil, &eb); got != http.StatusUnauthorized {
		t.Errorf("with a wrong token: got %d", got)
	}
	if got := e.doAuth("Bearer "+token, "GET", "/v1/packs", nil, nil); got != http.StatusOK {
		t.Errorf("with the token: got %d", got)
	}
	// Opening /?token= sets the cookie and drops the token from the URL.
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(e.url + "/?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cookies := res.Cookies()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" || len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode ||
		cookies[0].Name != "packs_token_"+e.url[strings.LastIndex(e.url, ":")+1:] || cookies[0].Path != "/" {
		t.Fatalf("got %d %v %v", res.StatusCode, res.Header, cookies)
	}
	req, _ := http.NewRequest("GET", e.url+"/v1/packs", nil)
	req.AddCookie(cookies[0])
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("with the cookie: got %d", res.StatusCode)
	}
	res, err = c.Get(e.url + "/?token=wrong")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("/?token=wrong: got %d", res.StatusCode)
	}
}

func TestListen(t *testing.T) {
	tests := []struct {
		addr    string
		wantErr error
	}{
		{"nonsense", ErrBadAddr},
		{":0", nil},
		{"127.0.0.1:0", nil},
		{"0.0.0.0:0", nil},
	}
	for _, tt := range tests {
		srv := &Server{cfg: Config{Addr: tt.addr, Token: testToken}}
		ln, err := srv.Listen()
		if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
			t.Errorf("Listen(%q): got %v, want %v", tt.addr, err, tt.wantErr)
		}
		if ln != nil {
			if tt.addr == ":0" && !strings.HasPrefix(ln.Addr().String(), "127.0.0.1:") {
				t.Errorf("Listen(:0) bound %s, want loopback", ln.Addr())
			}
			ln.Close()
		}
	}
}

// TestHandlerAllowedHosts: --allow-host values reach the shared guard: a
// malformed one is refused, an allowed name is answered on the bound port.
func TestHandlerAllowedHosts(t *testing.T) {
	srv := &Server{cfg: Config{AllowedHosts: []string{"http://x"}, Token: testToken}}
	if _, err := srv.Handler("127.0.0.1:7777"); !errors.Is(err, ErrBadAddr) {
		t.Errorf("allowed host with a scheme: got %v, want ErrBadAddr", err)
	}
	e := newEnv(t, envOptions{allowedHosts: []string{"Packs.Example"}})
	h, err := e.srv.Handler("0.0.0.0:7777")
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]int{"packs.example:7777": http.StatusOK, "0.0.0.0:7777": http.StatusForbidden, "packs.example:7778": http.StatusForbidden} {
		r := httptest.NewRequest("GET", "/v1/status", nil)
		r.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("host %q: got %d, want %d", host, w.Code, want)
		}
	}
}
