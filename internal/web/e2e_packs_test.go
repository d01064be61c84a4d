package web

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// other is a copy of the notes pack named name.
func other(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(notesPack)); err != nil {
		t.Fatal(err)
	}
	renamePack(t, dir, name)
	return dir
}

// rows is a JavaScript expression: the names of the packs the list shows,
// joined with commas.
const rows = `[...document.querySelectorAll("#packs .pack-row")].map(r => r.dataset.pack).join(",")`

// TestBrowserPacks: the Packs page lists installed, built-in and in-place
// packs, and narrows the list by search, status, source and grants. A
// pack's page shows its docs, tools, grants and audit rows; from it the
// person disables and enables, updates (the dialog shows the new version
// and what it newly asks for; only what is ticked is granted) and removes
// (after a confirmation in the page). The policy's refusal shows there
// too: a mandated pack cannot be disabled. Its screenshots are
// web-packs.png and web-pack-page.png.
func TestBrowserPacks(t *testing.T) {
	chromium := findChromium(t)
	user := t.TempDir()
	copySkill(t, "webapp-testing", filepath.Join(user, ".claude", "skills", "webapp-testing"))
	policy := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(policy, []byte("[packs]\nmandated = [\"other\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{builtins: true, userHome: user, policy: policy})
	src := notesVariant(t, "SKILL.md", func(s string) string { return s })
	e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"source": src, "grant": []string{"terminal_exec"}}, nil)
	e.must(http.StatusCreated, "POST", "/v1/packs", map[string]any{"source": other(t, "other")}, nil)

	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
	b.step("open the packs page", chromedp.Click(chromedp.CSS("#nav-packs")))
	b.poll("installed, built-in and in-place packs are listed", `(() => { const r = `+rows+`.split(","); return r.includes("notes") && r.includes("other") && r.includes("webapp-testing") && r.includes("web-fetch"); })()`)
	b.shot("web-packs")

	filter := func(what, sel, value, want string) {
		t.Helper()
		b.step(what, chromedp.Evaluate[chromedp.Void](`(() => { const e = document.querySelector(`+jsString(sel)+`); e.value = `+jsString(value)+`; e.dispatchEvent(new Event("input")); })()`))
		b.poll(what+": "+want, want)
	}
	filter("search for other", "#packs-search", "other", rows+` === "other"`)
	b.step("press Enter in the search", chromedp.SendKeys(chromedp.CSS("#packs-search"), "\r"))
	b.poll("the page stays, still filtered", `location.hash === "#/packs" && location.search === "" && `+rows+` === "other"`)
	filter("search for a tool's name", "#packs-search", "rows", `(() => { const r = `+rows+`; return r.includes("notes") && r.includes("other") && !r.includes("web-fetch"); })()`)
	filter("search for nothing known", "#packs-search", "zzz-no-such", `document.querySelector("#packs").textContent.includes("No pack matches")`)
	filter("clear the search", "#packs-search", "", `(`+rows+`).includes("web-fetch")`)
	filter("only built-ins", "#packs-origin", "built_in", `(() => { const r = [...document.querySelectorAll("#packs .pack-row")]; return r.length > 0 && r.every(x => x.querySelector(".badge.origin.built_in")) && !`+rows+`.split(",").includes("notes"); })()`)
	filter("only in place", "#packs-origin", "in_place", rows+` === "webapp-testing"`)
	filter("only installed", "#packs-origin", "installed", rows+` === "notes,other"`)
	filter("granted something", "#packs-granted", "granted", rows+` === "notes"`)
	filter("granted nothing", "#packs-granted", "not_granted", rows+` === "other"`)
	filter("any grant", "#packs-granted", "", rows+` === "notes,other"`)

	// notes' own page.
	b.step("open notes", chromedp.Click(chromedp.CSS(`.pack-row[data-pack="notes"] a.pack-link`)))
	b.poll("its docs are rendered", `[...document.querySelectorAll("#pack-page .doc-body h1")].some(h => h.textContent === "Notes")`)
	b.poll("its tools are listed", count(`#pack-page details.tool`)+` === 5`)
	b.poll("its grant shows", `(document.querySelector('#pack-page tr[data-cap="terminal_exec"] td.ok') || {}).textContent?.startsWith("sh")`)
	b.poll("its install is in its audit rows", `document.querySelector("#pack-audit").textContent.includes("install")`)
	b.step("scroll to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	b.shot("web-pack-page")

	b.step("disable it", chromedp.Click(chromedp.CSS("#pack-toggle")))
	b.poll("it says it is disabled", `document.querySelector("#pack-toggle").textContent === "Enable" && document.querySelector("#pack-action-result").textContent.includes("is disabled")`)
	var p packJSON
	e.must(http.StatusOK, "GET", "/v1/packs/notes", nil, &p)
	if !p.Disabled {
		t.Fatal("Disable in the app did not disable notes")
	}
	b.step("back to the list", chromedp.Click(chromedp.CSS("#pack-page a.back")))
	filter("only disabled", "#packs-status", "disabled", rows+` === "notes"`)
	filter("only enabled", "#packs-status", "enabled", `!(`+rows+`).split(",").includes("notes") && (`+rows+`).includes("other")`)
	filter("any status", "#packs-status", "", rows+` === "notes,other"`)
	b.step("open notes again", chromedp.Click(chromedp.CSS(`.pack-row[data-pack="notes"] a.pack-link`)))
	b.poll("Enable shows", `(document.querySelector("#pack-toggle") || {}).textContent === "Enable"`)
	b.step("enable it", chromedp.Click(chromedp.CSS("#pack-toggle")))
	b.poll("it says it is enabled", `document.querySelector("#pack-toggle").textContent === "Disable"`)

	// An update that asks for more: the dialog says so, and grants only
	// what is ticked.
	b.step("check for an update while there is none", chromedp.Click(chromedp.CSS("#pack-update")))
	b.poll("it is up to date", `document.querySelector("#pack-action-result").textContent.includes("is up to date")`)
	toml := filepath.Join(src, "skill.toml")
	next := strings.Replace(strings.Replace(string(mustRead(t, toml)), `version = "1.0.0"`, `version = "1.1.0"`, 1),
		"[capabilities]\n", "[capabilities]\nnetwork = [\"api.example.com\"]\nenv_read = [\"LANG\"]\n", 1)
	if err := os.WriteFile(toml, []byte(next), 0o644); err != nil {
		t.Fatal(err)
	}
	b.step("check for an update", chromedp.Click(chromedp.CSS("#pack-update")))
	b.poll("the dialog shows the new version and requests", `document.querySelector("#add-dialog").open && document.querySelector("#consent").textContent.includes("1.0.0 → 1.1.0") && document.querySelector("#consent pre.changes").textContent.includes("+ network: api.example.com")`)
	b.poll("the carried grant has no box", `!document.querySelector('#consent li[data-cap="terminal_exec"] input') && document.querySelector('#consent li[data-cap="terminal_exec"]').textContent.includes("carries over")`)
	b.step("tick network only", chromedp.Click(chromedp.CSS(`#consent li[data-cap="network"] input`)))
	b.step("update", chromedp.Click(chromedp.CSS("#add-confirm")))
	b.poll("it says it updated", `document.querySelector("#pack-action-result").textContent.includes("Updated notes to 1.1.0")`)
	b.poll("network is granted and env_read not", `!!document.querySelector('#pack-page tr[data-cap="network"] td.ok') && !!document.querySelector('#pack-page tr[data-cap="env_read"] td.bad')`)
	var updated packJSON
	e.must(http.StatusOK, "GET", "/v1/packs/notes", nil, &updated)
	if updated.Version != "1.1.0" {
		t.Fatalf("after Update: notes is %s", updated.Version)
	}

	// Remove asks first; keeping it changes nothing.
	b.step("remove", chromedp.Click(chromedp.CSS("#pack-remove")))
	b.step("keep it after all", chromedp.WaitVisible(chromedp.CSS("#pack-remove-no")), chromedp.Click(chromedp.CSS("#pack-remove-no")))
	if got := e.do("GET", "/v1/packs/notes", nil, nil); got != http.StatusOK {
		t.Fatalf("Keep it removed notes: GET answers %d", got)
	}
	b.step("remove again", chromedp.Click(chromedp.CSS("#pack-remove")))
	b.step("confirm", chromedp.WaitVisible(chromedp.CSS("#pack-remove-yes")), chromedp.Click(chromedp.CSS("#pack-remove-yes")))
	b.poll("back on the list, without notes", `document.querySelector("#packs-notice").textContent.includes("Removed notes") && !(`+rows+`).split(",").includes("notes")`)
	if got := e.do("GET", "/v1/packs/notes", nil, nil); got != http.StatusNotFound {
		t.Fatalf("after Remove: GET notes answers %d, want 404", got)
	}

	// The policy mandates other: the app cannot disable it.
	b.step("open other", chromedp.Click(chromedp.CSS(`.pack-row[data-pack="other"] a.pack-link`)))
	b.poll("it says it is mandated", `!!document.querySelector("#pack-toggle") && document.querySelector("#pack-page").textContent.includes("The policy mandates this pack")`)
	b.step("try to disable it", chromedp.Click(chromedp.CSS("#pack-toggle")))
	b.poll("the policy's refusal shows", `(document.querySelector("#pack-action-result .error") || {}).textContent?.includes("mandates pack other")`)
	var o packJSON
	e.must(http.StatusOK, "GET", "/v1/packs/other", nil, &o)
	if o.Disabled {
		t.Error("the app disabled a pack the policy mandates")
	}
}

// TestBrowserAddPack: "Add a pack" shows what a pack asks for before
// anything is installed, from a path and from an uploaded archive.
// Cancel installs nothing; Install grants only what is ticked. Its
// screenshot is web-add-pack.png.
func TestBrowserAddPack(t *testing.T) {
	chromium := findChromium(t)
	e := newEnv(t, envOptions{})
	archived := other(t, "archived")
	archive := filepath.Join(t.TempDir(), "archived.tar.gz")
	if err := os.WriteFile(archive, tarPack(t, archived, "archived"), 0o644); err != nil {
		t.Fatal(err)
	}
	installed := func() []string {
		t.Helper()
		var list struct{ Items []packJSON }
		e.must(http.StatusOK, "GET", "/v1/packs", nil, &list)
		var names []string
		for _, p := range list.Items {
			names = append(names, p.Name)
		}
		return names
	}
	b := openBrowser(t, chromium, screenshotDir(t))
	b.step("open the app", chromedp.Navigate(e.url+"/?token="+e.token), chromedp.WaitVisible(chromedp.CSS("#new-chat")))
	b.step("open the packs page", chromedp.Click(chromedp.CSS("#nav-packs")))
	b.poll("the empty list says so", `document.querySelector("#packs").textContent.includes("No packs installed yet")`)

	b.step("open Add a pack", chromedp.Click(chromedp.CSS("#add-open")))
	b.step("review a folder", chromedp.SendKeys(chromedp.CSS("#add-source"), notesPack), chromedp.Click(chromedp.CSS("#add-review")))
	b.poll("the dialog shows what notes asks for", `!document.querySelector("#add-step-consent").hidden && document.querySelector('#consent li[data-cap="terminal_exec"]').textContent.includes("sh") && document.querySelectorAll("#consent .consent-tools li").length === 5`)
	b.poll("nothing is ticked", `!document.querySelector('#consent li[data-cap="terminal_exec"] input').checked`)
	// Every part of the dialog is the pack's text or ours: no stray value.
	if txt := must(t, b.ctx, chromedp.Text(chromedp.CSS("#consent"))); strings.Contains(txt, "null") || strings.Contains(txt, "undefined") {
		t.Errorf("the dialog shows a stray value: %q", txt)
	}
	b.shot("web-add-pack")
	if got := installed(); len(got) != 0 {
		t.Fatalf("the review installed %v", got)
	}
	b.step("cancel", chromedp.Click(chromedp.CSS("#add-decline")))
	b.poll("the dialog is closed", `!document.querySelector("#add-dialog").open`)
	if got := installed(); len(got) != 0 {
		t.Fatalf("Cancel installed %v", got)
	}

	b.step("open Add a pack again", chromedp.Click(chromedp.CSS("#add-open")))
	b.poll("the dialog starts over", `!document.querySelector("#add-step-source").hidden && document.querySelector("#add-source").value === ""`)
	b.step("review the folder again", chromedp.SendKeys(chromedp.CSS("#add-source"), notesPack), chromedp.Click(chromedp.CSS("#add-review")))
	b.step("tick terminal_exec", chromedp.WaitVisible(chromedp.CSS(`#consent li[data-cap="terminal_exec"] input`)), chromedp.Click(chromedp.CSS(`#consent li[data-cap="terminal_exec"] input`)))
	b.step("install", chromedp.Click(chromedp.CSS("#add-confirm")))
	b.poll("installed, and listed", `document.querySelector("#packs-notice").textContent.includes("Installed notes") && !!document.querySelector('.pack-row[data-pack="notes"]')`)
	var p packJSON
	e.must(http.StatusOK, "GET", "/v1/packs/notes", nil, &p)
	if !p.Capabilities[0].Granted {
		t.Errorf("the ticked terminal_exec is not granted: %+v", p.Capabilities[0])
	}

	b.step("open Add a pack for an archive", chromedp.Click(chromedp.CSS("#add-open")))
	b.step("choose the archive", chromedp.SetUploadFiles(chromedp.CSS("#add-file"), []string{archive}))
	b.step("review it", chromedp.Click(chromedp.CSS("#add-review")))
	b.poll("the dialog shows the archive's pack", `!document.querySelector("#add-step-consent").hidden && document.querySelector("#consent").textContent.includes("archived")`)
	b.step("install it, granting nothing", chromedp.Click(chromedp.CSS("#add-confirm")))
	b.poll("installed", `document.querySelector("#packs-notice").textContent.includes("Installed archived")`)
	var a packJSON
	e.must(http.StatusOK, "GET", "/v1/packs/archived", nil, &a)
	if a.Capabilities[0].Granted {
		t.Errorf("nothing was ticked, yet %s is granted", a.Capabilities[0].Capability)
	}

	url, _ := gitSource(t, other(t, "fromgit"))
	b.step("open Add a pack for a URL", chromedp.Click(chromedp.CSS("#add-open")))
	b.step("review the URL", chromedp.SendKeys(chromedp.CSS("#add-source"), url), chromedp.Click(chromedp.CSS("#add-review")))
	b.poll("the dialog shows the repository's pack", `!document.querySelector("#add-step-consent").hidden && document.querySelector("#consent").textContent.includes("fromgit") && document.querySelector("#consent").textContent.includes(`+jsString(url)+`)`)
	b.step("install it", chromedp.Click(chromedp.CSS("#add-confirm")))
	b.poll("installed", `document.querySelector("#packs-notice").textContent.includes("Installed fromgit")`)

	b.step("open Add a pack with a bad path", chromedp.Click(chromedp.CSS("#add-open")))
	b.step("review a path that is no pack", chromedp.SendKeys(chromedp.CSS("#add-source"), t.TempDir()), chromedp.Click(chromedp.CSS("#add-review")))
	b.poll("the error shows in the dialog", `document.querySelector("#add-result .error") !== null && document.querySelector("#add-step-consent").hidden`)
	b.step("cancel", chromedp.Click(chromedp.CSS("#add-cancel")))
}
