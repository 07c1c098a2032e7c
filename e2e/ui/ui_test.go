package ui

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// devConfig makes the fake driver's spawns take a moment, so BUILD is
// on screen before ACTIVE.
const devConfig = `client {
  fake_spawn_latency = "2s"
}
acl {
  enabled = true
}
`

// hugeFlavor fits no dev host: its boots end in NoValidHost.
const hugeFlavor = "99"

// TestWebUI drives the web UI in a real headless Chromium against a dev
// agent with ACLs on, so the UI's native-API calls carry the session's
// token: an admin logs in, creates an instance and watches it go ACTIVE
// without a reload, stops it, starts it again with a bulk action, deletes
// it, reads a NoValidHost's per-filter explanation, and disables and
// enables a host; a project member then sees only their project's
// instances and no admin pages. No page may log a console error.
func TestWebUI(t *testing.T) {
	chromium := requireChromium(t)
	base := startDevAgent(t, "uidev", devConfig)

	// Wait for the dev seeds: the identity users, the flavors and the host.
	var adminToken string
	eventually(t, "identity seeded", 30*time.Second, func() (err error) {
		adminToken, err = token(t, base, "admin")
		return err
	})
	eventually(t, "host up and flavors seeded", 30*time.Second, func() error {
		var hosts []struct{ Name, Status string }
		if code, _ := call(t, "GET", base+"/v1/hosts", adminToken, nil, &hosts); code != 200 || len(hosts) != 1 || hosts[0].Status != "up" {
			return fmt.Errorf("hosts %d %+v", code, hosts)
		}
		var flavors []struct{ ID string }
		if code, _ := call(t, "GET", base+"/v1/flavors", adminToken, nil, &flavors); code != 200 || len(flavors) < 5 {
			return fmt.Errorf("flavors %d %d", code, len(flavors))
		}
		return nil
	})
	if code, _ := call(t, "GET", base+"/v1/hosts", "", nil, nil); code != http.StatusUnauthorized {
		t.Fatalf("native API without a token: %d", code)
	}
	// A flavor too big for the dev host (32 GiB of RAM) yet within the
	// project's default quota (50 GiB), so the scheduler, not the quota,
	// refuses it.
	if code, _ := call(t, "POST", base+"/v1/flavors", adminToken, map[string]any{"ID": hugeFlavor, "Name": "x1.huge",
		"VCPUs": 4, "MemoryMB": 40960, "RootGB": 10}, &struct{}{}); code != 200 {
		t.Fatalf("create huge flavor: %d", code)
	}

	browser := newBrowser(t, chromium)
	consoleMsgs := &consoleLog{}
	admin := newTab(t, browser, "admin", base, consoleMsgs)

	var hostID string
	t.Run("login", func(t *testing.T) {
		admin.t = t
		// / redirects to /ui/, which sends a visitor to the login page.
		admin.open("open the UI", base+"/", "login form", `document.querySelector('#login-user')`, 15*time.Second)
		admin.waitJS("no navigation or log out before login", `getComputedStyle(document.querySelector('#session')).display === 'none' && getComputedStyle(document.querySelector('#nav')).display === 'none'`, 5*time.Second)
		admin.checkA11y("login")
		admin.screenshot("login")
		// Keyboard only: type, then Enter submits.
		admin.do("log in", chromedp.SendKeys(chromedp.CSS("#login-user"), "admin"),
			chromedp.SendKeys(chromedp.CSS("#login-password"), "admin\n"))
		admin.waitJS("overview with the cluster's leader", `document.querySelector('#stat-leader .stat-value')?.textContent === 'uidev'`, 20*time.Second)
		admin.waitJS("one host up", `document.querySelector('#stat-hosts-up .stat-value')?.textContent === '1/1'`, 20*time.Second)
		admin.waitJS("capacity bars", `document.querySelectorAll('#cluster .meter').length >= 3`, 10*time.Second)
		admin.waitJS("admin nav", `[...document.querySelectorAll('#nav a')].map(a => a.textContent).join() === 'Overview,Instances,Create,Hosts,Scheduling,Groups'`, 5*time.Second)
		if tok := must[string](admin, `JSON.parse(sessionStorage.getItem('stratus.session')).token`); tok == "" {
			t.Fatal("no token in sessionStorage")
		}
		admin.checkA11y("overview")
		admin.screenshot("overview")
		// The skip link moves focus to the content without changing the route.
		admin.do("skip link", chromedp.Focus(chromedp.CSS(".skip-link")), chromedp.SendKeys(chromedp.CSS(".skip-link"), "\r"))
		admin.waitJS("focus on main, route kept", `document.activeElement?.id === 'main' && location.hash === '#/overview'`, 5*time.Second)
		// Anything that reloads the page loses this.
		must[bool](admin, `(window.__noReload = 'still here', true)`)
	})

	var webID string
	t.Run("create and watch ACTIVE", func(t *testing.T) {
		admin.t = t
		admin.goTo("/create")
		admin.waitJS("create form", `document.querySelector('#create-form')`, 10*time.Second)
		admin.waitJS("focus on the page heading", `document.activeElement && document.activeElement.tagName === 'H1'`, 5*time.Second)
		admin.checkA11y("create")
		admin.do("fill the form", chromedp.SendKeys(chromedp.CSS("#create-name"), "web-1"),
			chromedp.SetValue(chromedp.CSS("#create-flavor"), "1"))
		admin.screenshot("create")
		admin.do("submit", chromedp.Click(chromedp.CSS("#create-submit")))
		admin.waitJS("instance page", `location.hash.startsWith('#/instances/') && document.querySelector('main h1')?.textContent === 'web-1'`, 15*time.Second)
		webID = strings.TrimPrefix(must[string](admin, `location.hash`), "#/instances/")
		// Follow the status as it changes on the page, without reloading.
		seen := map[string]bool{}
		deadline := time.Now().Add(30 * time.Second)
		for !seen["ACTIVE"] {
			if time.Now().After(deadline) {
				t.Fatalf("never ACTIVE; saw %v\n%s", seen, admin.pageText())
			}
			st, err := eval[string](admin, `document.querySelector('.page-head .badge')?.dataset.status || ''`)
			if err == nil && st != "" {
				seen[st] = true
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !seen["BUILD"] {
			t.Errorf("BUILD was never shown before ACTIVE (saw %v)", seen)
		}
		if must[string](admin, `window.__noReload || ''`) != "still here" {
			t.Fatal("the page reloaded")
		}
		admin.waitJS("create in the timeline", `document.querySelector('#timeline [data-action="create"]')`, 10*time.Second)
		// The console card reads the console log through the Compute API.
		admin.waitJS("console card", `document.querySelector('#console-card #console-vnc')`, 5*time.Second)
		admin.do("show the console log", chromedp.Click(chromedp.CSS(`#console-log-show`)))
		admin.waitJS("console log shown", `document.querySelector('#console-log').textContent.includes('login:')`, 15*time.Second)
		admin.checkA11y("instance")
		admin.screenshot("instance")
	})

	t.Run("attach and detach a volume", func(t *testing.T) {
		admin.t = t
		volumes := must[string](admin, `JSON.parse(sessionStorage.getItem('stratus.session')).endpoints.volumev3 || ''`)
		if volumes == "" {
			t.Fatal("no volumev3 endpoint in the session's catalog")
		}
		var created struct{ Volume struct{ ID string } }
		if code, _ := call(t, "POST", base+volumes+"/volumes", adminToken, map[string]any{"volume": map[string]any{"size": 1, "name": "data-1"}}, &created); code != http.StatusAccepted {
			t.Fatalf("create volume: %d", code)
		}
		eventually(t, "volume available", 30*time.Second, func() error {
			var v struct{ Volume struct{ Status string } }
			if code, _ := call(t, "GET", base+volumes+"/volumes/"+created.Volume.ID, adminToken, nil, &v); code != 200 || v.Volume.Status != "available" {
				return fmt.Errorf("volume %d %s", code, v.Volume.Status)
			}
			return nil
		})
		admin.waitJS("volumes card, nothing attached", `document.querySelector('#volumes-card')?.textContent.includes('No volume is attached.')`, 10*time.Second)
		admin.do("attach", chromedp.Click(chromedp.CSS(`#volume-attach`)))
		admin.waitJS("attach dialog offers data-1", `[...document.querySelectorAll('dialog[open] select option')].some(o => o.textContent.startsWith('data-1'))`, 10*time.Second)
		admin.checkA11y("attach volume dialog")
		admin.do("confirm", chromedp.Click(chromedp.CSS(`dialog[open] [data-confirm]`)))
		row := fmt.Sprintf(`#volumes-table tr[data-volume=%q]`, created.Volume.ID)
		admin.waitJS("data-1 in-use on the page", `document.querySelector('`+row+`')?.textContent.includes('in-use') && document.querySelector('`+row+`').textContent.includes('data-1')`, 60*time.Second)
		admin.checkA11y("instance with a volume")
		admin.screenshot("instance-volume")
		admin.do("detach", chromedp.Click(chromedp.CSS(row+` [data-detach]`)))
		admin.waitJS("confirmation dialog", `document.querySelector('dialog[open] [data-confirm]')`, 5*time.Second)
		admin.do("confirm", chromedp.Click(chromedp.CSS(`dialog[open] [data-confirm]`)))
		admin.waitJS("detached", `document.querySelector('#volumes-card')?.textContent.includes('No volume is attached.')`, 60*time.Second)
		var v struct{ Volume struct{ Status string } }
		if code, _ := call(t, "GET", base+volumes+"/volumes/"+created.Volume.ID, adminToken, nil, &v); code != 200 || v.Volume.Status != "available" {
			t.Errorf("after detach the volume is %d %q, want available", code, v.Volume.Status)
		}
		if must[string](admin, `window.__noReload || ''`) != "still here" {
			t.Fatal("the page reloaded")
		}
	})

	t.Run("stop", func(t *testing.T) {
		admin.t = t
		admin.do("stop", chromedp.Click(chromedp.CSS(`[data-op="stop"]`)))
		admin.waitJS("confirmation dialog", `document.querySelector('dialog[open] [data-confirm]')`, 5*time.Second)
		admin.checkA11y("confirmation dialog")
		admin.screenshot("confirm-stop")
		admin.do("confirm", chromedp.Click(chromedp.CSS(`dialog[open] [data-confirm]`)))
		admin.waitJS("SHUTOFF", `document.querySelector('.page-head .badge')?.dataset.status === 'SHUTOFF'`, 30*time.Second)
		admin.waitJS("stop in the timeline", `document.querySelector('#timeline [data-action="stop"]')`, 10*time.Second)
		if must[string](admin, `window.__noReload || ''`) != "still here" {
			t.Fatal("the page reloaded")
		}
	})

	t.Run("instance list and bulk start", func(t *testing.T) {
		admin.t = t
		admin.goTo("/instances")
		row := fmt.Sprintf(`#instances-table tr[data-id=%q]`, webID)
		admin.waitJS("web-1 SHUTOFF in the list", `document.querySelector('`+row+`')?.dataset.status === 'SHUTOFF'`, 15*time.Second)
		admin.checkA11y("instances")
		admin.screenshot("instances")
		// Search, filter and sort happen in the page.
		admin.do("search", chromedp.SendKeys(chromedp.CSS("#inst-search"), "zzz-nothing"))
		admin.waitJS("no match", `!document.querySelector('`+row+`')`, 5*time.Second)
		must[bool](admin, `(() => { const s = document.querySelector('#inst-search'); s.value = 'web'; s.dispatchEvent(new Event('input')); return true; })()`)
		admin.waitJS("match again", `document.querySelector('`+row+`')`, 5*time.Second)
		must[bool](admin, `(() => { const s = document.querySelector('#inst-status'); s.value = 'ACTIVE'; s.dispatchEvent(new Event('change')); return true; })()`)
		admin.waitJS("filtered out", `!document.querySelector('`+row+`')`, 5*time.Second)
		must[bool](admin, `(() => { const s = document.querySelector('#inst-status'); s.value = ''; s.dispatchEvent(new Event('change')); return true; })()`)
		admin.do("sort by name", chromedp.Click(chromedp.CSS(`button[data-sort="name"]`)))
		admin.waitJS("sorted", `document.querySelector('button[data-sort="name"]').closest('th').getAttribute('aria-sort') === 'ascending'`, 5*time.Second)
		// Bulk: select, start, confirm; the row turns ACTIVE live.
		admin.do("select web-1", chromedp.Click(chromedp.CSS(row+` input[type="checkbox"]`)))
		admin.waitJS("bulk start enabled", `!document.querySelector('[data-bulk="start"]').disabled`, 5*time.Second)
		admin.do("bulk start", chromedp.Click(chromedp.CSS(`[data-bulk="start"]`)))
		admin.waitJS("confirmation dialog", `document.querySelector('dialog[open] [data-confirm]')`, 5*time.Second)
		admin.do("confirm", chromedp.Click(chromedp.CSS(`dialog[open] [data-confirm]`)))
		admin.waitJS("web-1 ACTIVE in the list", `document.querySelector('`+row+`')?.dataset.status === 'ACTIVE'`, 30*time.Second)
	})

	t.Run("delete", func(t *testing.T) {
		admin.t = t
		admin.goTo("/instances/" + webID)
		admin.waitJS("instance page", `document.querySelector('[data-op="delete"]')`, 10*time.Second)
		admin.do("delete", chromedp.Click(chromedp.CSS(`[data-op="delete"]`)))
		admin.waitJS("confirmation dialog", `document.querySelector('dialog[open] [data-confirm]')`, 5*time.Second)
		admin.do("confirm", chromedp.Click(chromedp.CSS(`dialog[open] [data-confirm]`)))
		admin.waitJS("back on the list", `location.hash === '#/instances'`, 10*time.Second)
		admin.waitJS("web-1 gone", `document.querySelector('#inst-count') && !document.querySelector('#instances-table tr[data-id="`+webID+`"]')`, 30*time.Second)
		if must[string](admin, `window.__noReload || ''`) != "still here" {
			t.Fatal("the page reloaded")
		}
	})

	var bigID string
	t.Run("NoValidHost explained", func(t *testing.T) {
		admin.t = t
		admin.goTo("/create")
		admin.waitJS("create form", `document.querySelector('#create-flavor option[value="`+hugeFlavor+`"]')`, 10*time.Second)
		admin.do("fill the form", chromedp.SendKeys(chromedp.CSS("#create-name"), "too-big"),
			chromedp.SetValue(chromedp.CSS("#create-flavor"), hugeFlavor),
			chromedp.Click(chromedp.CSS("#create-submit")))
		admin.waitJS("instance page", `document.querySelector('main h1')?.textContent === 'too-big'`, 15*time.Second)
		bigID = strings.TrimPrefix(must[string](admin, `location.hash`), "#/instances/")
		admin.waitJS("ERROR", `document.querySelector('.page-head .badge')?.dataset.status === 'ERROR'`, 30*time.Second)
		admin.waitJS("the fault", `document.querySelector('.fault .fault-message')?.textContent.startsWith('No valid host was found. 0/1 hosts:')`, 10*time.Second)
		admin.waitJS("per-filter explanation", `[...document.querySelectorAll('.fault .explanation li')].some(li => /1 host — insufficient (MEMORY_MB|VCPU|DISK_GB)/.test(li.textContent))`, 5*time.Second)
		admin.screenshot("novalidhost")

		admin.goTo("/evaluations")
		admin.waitJS("placement failure with its explanation", `document.querySelector('#placement-failures .failure[data-id="`+bigID+`"] .explanation li')`, 15*time.Second)
		admin.waitJS("evaluations listed", `document.querySelectorAll('#evals-table tbody tr[data-eval]').length >= 2`, 10*time.Second)
		admin.checkA11y("scheduling")
		admin.screenshot("scheduling")
	})

	t.Run("groups", func(t *testing.T) {
		admin.t = t
		// A two-member group registered through /v1, as `cloudctl
		// instance run` does; its page follows the deployment.
		var reg struct{ Name string }
		code, _ := call(t, "POST", base+"/v1/groups", adminToken, map[string]any{"Spec": map[string]any{
			"Name": "grp", "Count": 2, "Flavor": "m1.tiny", "Image": "cirros"}}, &reg)
		if code != 200 {
			t.Fatalf("register group: %d", code)
		}
		admin.goTo("/groups")
		admin.waitJS("group listed", `document.querySelector('#groups-table tr[data-group="grp"] a')`, 10*time.Second)
		admin.checkA11y("groups")
		admin.do("open the group", chromedp.Click(chromedp.CSS(`#groups-table tr[data-group="grp"] a`)))
		admin.waitJS("group page with its members and deployment", `document.querySelector('main h1')?.textContent === 'grp' && document.querySelectorAll('main li a[href^="#/instances/"]').length > 0 && [...document.querySelectorAll('.meter-row')].some(r => r.textContent.includes('Placed') && r.textContent.includes('of 2'))`, 30*time.Second)
		admin.waitJS("version 1", `document.querySelector('#group-versions [data-version="1"]')`, 10*time.Second)
		admin.checkA11y("group")
		admin.screenshot("group")
		// Stop (without purge: the group stays, stopped) and watch the
		// members go.
		admin.do("stop", chromedp.Click(chromedp.CSS(`[data-op="group-stop"]`)))
		admin.waitJS("dialog", `document.querySelector('dialog[open] input[name="purge"]')`, 5*time.Second)
		admin.do("confirm", chromedp.Click(chromedp.CSS(`dialog[open] [data-confirm]`)))
		admin.waitJS("a stop version", `document.querySelector('#group-versions [data-version="2"]')?.textContent.includes('stop')`, 15*time.Second)
		admin.waitJS("members gone", `document.querySelectorAll('main li a[href^="#/instances/"]').length === 0`, 30*time.Second)
	})

	// An instance of the admin project the member must not see, which
	// the hosts page shows on the host.
	var adminVM struct{ Server struct{ ID string } }
	if code, _ := call(t, "POST", base+"/compute/v2.1/servers", adminToken, map[string]any{"server": map[string]any{
		"name": "admin-vm", "imageRef": "cirros", "flavorRef": "1", "networks": "none"}}, &adminVM); code != http.StatusAccepted {
		t.Fatalf("boot admin-vm: %d", code)
	}

	t.Run("hosts", func(t *testing.T) {
		admin.t = t
		admin.goTo("/hosts")
		card := `.host[data-host="uidev"]`
		admin.waitJS("host card with capacity", `document.querySelectorAll('`+card+` .meter').length >= 3`, 10*time.Second)
		admin.waitJS("admin-vm on the host, the failed instance not", `document.querySelector('`+card+` summary')?.textContent === '1 instance' && document.querySelector('`+card+` .host-instances')?.textContent.includes('admin-vm')`, 15*time.Second)
		admin.waitJS("memory in use", `document.querySelector('`+card+` .meter[aria-valuenow="512"]')`, 15*time.Second)
		admin.checkA11y("hosts")
		admin.screenshot("hosts")
		admin.do("disable", chromedp.Click(chromedp.CSS(card+` [data-focus^="disable-"]`)))
		admin.waitJS("dialog", `document.querySelector('dialog[open] input[name="reason"]')`, 5*time.Second)
		admin.do("reason", chromedp.SendKeys(chromedp.CSS(`dialog[open] input[name="reason"]`), "maintenance"),
			chromedp.Click(chromedp.CSS(`dialog[open] [data-confirm]`)))
		admin.waitJS("disabled", `document.querySelector('`+card+`')?.textContent.includes('disabled: maintenance')`, 15*time.Second)
		var hosts []struct{ ID, Name string }
		call(t, "GET", base+"/v1/hosts", adminToken, nil, &hosts)
		hostID = hosts[0].ID
		admin.do("enable", chromedp.Click(chromedp.CSS(card+` [data-focus="enable-`+hostID+`"]`)))
		admin.waitJS("dialog", `document.querySelector('dialog[open] [data-confirm]')`, 5*time.Second)
		admin.do("confirm", chromedp.Click(chromedp.CSS(`dialog[open] [data-confirm]`)))
		admin.waitJS("enabled", `[...document.querySelectorAll('`+card+` .badge')].some(b => b.textContent === 'enabled')`, 15*time.Second)
	})

	t.Run("member sees only their project", func(t *testing.T) {
		member := newTab(t, browser, "demo", base, consoleMsgs)
		member.open("open the instances page", base+"/ui/#/instances", "login form", `document.querySelector('#login-user') && location.hash.includes('next=')`, 15*time.Second)
		member.do("log in", chromedp.SendKeys(chromedp.CSS("#login-user"), "demo"),
			chromedp.SendKeys(chromedp.CSS("#login-password"), "demo\n"))
		member.waitJS("instances page after login", `location.hash === '#/instances' && document.querySelector('#inst-count')?.textContent !== ''`, 15*time.Second)
		member.waitJS("member nav", `[...document.querySelectorAll('#nav a')].map(a => a.textContent).join() === 'Overview,Instances,Create'`, 5*time.Second)
		demoToken, err := token(t, base, "demo")
		if err != nil {
			t.Fatal(err)
		}
		var demoVM struct{ Server struct{ ID string } }
		if code, _ := call(t, "POST", base+"/compute/v2.1/servers", demoToken, map[string]any{"server": map[string]any{
			"name": "demo-vm", "imageRef": "cirros", "flavorRef": "1", "networks": "none"}}, &demoVM); code != http.StatusAccepted {
			t.Fatalf("boot demo-vm: %d", code)
		}
		member.waitJS("demo-vm appears live", `document.querySelector('#instances-table tr[data-name="demo-vm"]')`, 15*time.Second)
		rows := must[[]string](member, `[...document.querySelectorAll('#instances-table tbody tr[data-id]')].map(r => r.dataset.name)`)
		if len(rows) != 1 || rows[0] != "demo-vm" {
			t.Fatalf("member sees %v, want only demo-vm", rows)
		}
		if must[bool](member, `!!document.querySelector('#inst-all')`) {
			t.Fatal("member is offered all projects")
		}
		member.checkA11y("member instances")
		member.screenshot("member-instances")

		member.goTo("/hosts")
		member.waitJS("hosts refused", `document.querySelector('main')?.textContent.includes('for administrators')`, 5*time.Second)
		member.goTo("/instances/" + adminVM.Server.ID)
		member.waitJS("admin's instance not found", `document.querySelector('main h1')?.textContent === 'Instance not found'`, 10*time.Second)
		member.goTo("/overview")
		member.waitJS("member overview", `document.querySelector('#stat-instances .stat-value')?.textContent === '1' && !document.querySelector('#cluster')`, 15*time.Second)
		member.checkA11y("member overview")
		member.screenshot("member-overview")

		// The member's pages read instances through the Compute API only:
		// no /v1 call but the index-only instance watch.
		urls := must[[]string](member, `performance.getEntriesByType('resource').map(e => e.name)`)
		for _, u := range urls {
			if strings.Contains(u, "/v1/") && !strings.Contains(u, "/v1/watch/instances") {
				t.Errorf("member's page called %s", u)
			}
		}

		// A phone: tables become cards, the menu collapses, nothing
		// scrolls sideways.
		member.do("phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		member.goTo("/instances")
		member.waitJS("list on a phone", `document.querySelector('#instances-table tr[data-name="demo-vm"]')`, 10*time.Second)
		member.waitJS("menu button", `getComputedStyle(document.querySelector('#nav-toggle')).display !== 'none' && getComputedStyle(document.querySelector('#nav')).display === 'none'`, 5*time.Second)
		if w := must[int](member, `document.documentElement.scrollWidth - window.innerWidth`); w > 1 {
			t.Errorf("the instance list scrolls sideways on a phone by %dpx", w)
		}
		member.screenshot("instances-phone")
		member.do("open the menu", chromedp.Click(chromedp.CSS("#nav-toggle")))
		member.waitJS("menu open", `document.querySelector('#nav-toggle').getAttribute('aria-expanded') === 'true' && getComputedStyle(document.querySelector('#nav')).display !== 'none'`, 5*time.Second)
		member.screenshot("menu-phone")
		member.goTo("/instances/" + demoVM.Server.ID)
		member.waitJS("detail on a phone", `document.querySelector('main h1')?.textContent === 'demo-vm' && document.querySelector('[data-op="delete"]')`, 10*time.Second)
		if w := must[int](member, `document.documentElement.scrollWidth - window.innerWidth`); w > 1 {
			t.Errorf("the instance page scrolls sideways on a phone by %dpx", w)
		}
		member.screenshot("instance-phone")
	})

	// Give late messages a moment, then check every page's console.
	time.Sleep(300 * time.Millisecond)
	for _, m := range consoleMsgs.all() {
		switch m.msg.Type {
		case chromedp.ConsoleError, chromedp.ConsoleException:
			// The member's lookup of the admin's instance is a 404 by
			// design; the browser logs the failed request.
			if m.tab == "demo" && m.msg.Source == "network" && strings.Contains(m.msg.URL, "/servers/"+adminVM.Server.ID) {
				continue
			}
			// Aborted by a change of the machine's network (another
			// test's interfaces), not by the UI; open loaded again.
			if strings.Contains(m.msg.Text, networkChanged) {
				t.Logf("console in tab %s: %s (%s): the machine's network changed", m.tab, m.msg.Text, m.msg.URL)
				continue
			}
			t.Errorf("console %s in tab %s: %s (%s:%d)", m.msg.Type, m.tab, m.msg.Text, m.msg.URL, m.msg.Line+1)
		case chromedp.ConsoleWarning:
			t.Logf("console warning in tab %s: %s (%s)", m.tab, m.msg.Text, m.msg.URL)
		}
	}
}
