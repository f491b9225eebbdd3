package server

import (
	"io/fs"
	"net/http"
	"path"
	"strings"
)

const missingFrontend = `<!doctype html><title>ClusterSpace</title>
<p>The frontend is not built into this binary. Run <code>make run</code> (or <code>cd frontend &amp;&amp; npm ci &amp;&amp; npm run build</code>, then rebuild).</p>`

// static serves the built frontend. Unknown paths without a file extension get index.html,
// so a reload on a client-side route still loads the app.
func (s *Server) static() http.Handler {
	if s.cfg.Frontend == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(missingFrontend))
		})
	}
	files := http.FileServerFS(s.cfg.Frontend)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if name == "" {
			name = "index.html"
		}
		st, err := fs.Stat(s.cfg.Frontend, name)
		if err == nil && st.IsDir() && name != "index.html" {
			// No directory listings: they show what the build holds and serve no one.
			http.NotFound(w, r)
			return
		}
		if err != nil {
			if path.Ext(name) != "" {
				http.NotFound(w, r)
				return
			}
			r = r.Clone(r.Context())
			r.URL.Path = "/"
			name = "index.html"
		}
		if strings.HasPrefix(name, "assets/") {
			// Vite puts a content hash in every asset's name, so they never change.
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		files.ServeHTTP(w, r)
	})
}
