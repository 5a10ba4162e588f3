package serve

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// ParseUpstream validates an upstream base URL ("" = def): http or https,
// a host, no credentials; a trailing slash is dropped. The host may hold
// placeholders, {name}, that the provider fills in per call
// (provider.Descriptor.PrepareUpstream: Vertex AI's {location}, Bedrock's
// {region}); the URL keeps them in Host as written.
func ParseUpstream(s, def string) (*url.URL, error) {
	if s == "" {
		s = def
	}
	s, host, marked := markPlaceholders(s)
	u, err := url.Parse(s)
	if err == nil && marked {
		if _, h, ok := strings.Cut(host, "@"); ok {
			host = h // refused below: the URL carries credentials
		}
		if u.Host == placeholderMark(host) {
			u.Host = host
		}
	}
	if err != nil {
		// The value is not quoted: it may hold a key, and an unparsable
		// URL cannot be redacted.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("the value is not a URL (%v)", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q must be an http:// or https:// URL", RedactURL(u))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q has no host", RedactURL(u))
	}
	if u.User != nil {
		return nil, fmt.Errorf("%q must not carry credentials; the application's own API key is passed through", RedactURL(u))
	}
	u.Fragment = ""
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	return u, nil
}

// placeholderRE is a {name} placeholder of an upstream host.
var placeholderRE = regexp.MustCompile(`\{[a-z]+\}`)

// markPlaceholders replaces the {name} placeholders in the host of s by
// parseable labels (placeholderMark); host is the host as written, marked
// whether there was one.
func markPlaceholders(s string) (out, host string, marked bool) {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s, "", false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	// url.URL.String writes a placeholder's braces escaped: read them back.
	host = strings.NewReplacer("%7B", "{", "%7b", "{", "%7D", "}", "%7d", "}").Replace(rest[:end])
	if !placeholderRE.MatchString(host) {
		return s, "", false
	}
	return scheme + "://" + placeholderMark(host) + rest[end:], host, true
}

// placeholderMark turns each {name} into the label tf-placeholder-name.
func placeholderMark(host string) string {
	return placeholderRE.ReplaceAllStringFunc(host, func(p string) string {
		return "tf-placeholder-" + p[1:len(p)-1]
	})
}

// Redacted replaces every query value of an upstream URL when it is shown.
const Redacted = "REDACTED"

// RedactURL renders an upstream URL for people — banners, summaries, error
// bodies sent to the application, live reports, refusal messages: without
// its user info, and with every query value replaced by REDACTED (names
// kept, a bare entry replaced whole), since gateways take keys there
// (?api-key=…) (DESIGN §12.10.4). It is the one function that shows an
// upstream URL; RedactURLIn applies it inside a text.
func RedactURL(u *url.URL) string {
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		parts := strings.Split(c.RawQuery, "&")
		for i, p := range parts {
			if name, _, ok := strings.Cut(p, "="); ok {
				parts[i] = name + "=" + Redacted
			} else if p != "" {
				parts[i] = Redacted
			}
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	if placeholderRE.MatchString(c.Host) {
		// url.URL escapes the braces of a placeholder host.
		host := c.Host
		c.Host = placeholderMark(host)
		return strings.Replace(c.String(), c.Host, host, 1)
	}
	return c.String()
}

// RedactURLIn returns text (an error's text, which may quote the URL a
// request went to) with every credential of each of urls replaced: the URL
// as written becomes RedactURL's form, and any query value, user name or
// password left on its own becomes REDACTED.
func RedactURLIn(text string, urls ...*url.URL) string {
	for _, u := range urls {
		if u == nil {
			continue
		}
		text = strings.ReplaceAll(text, u.String(), RedactURL(u))
		var secrets []string
		if u.User != nil {
			secrets = append(secrets, u.User.Username())
			if p, ok := u.User.Password(); ok {
				secrets = append(secrets, p)
			}
		}
		for _, p := range strings.Split(u.RawQuery, "&") {
			_, v, ok := strings.Cut(p, "=")
			if !ok {
				v = p
			}
			secrets = append(secrets, v)
			if dv, err := url.QueryUnescape(v); err == nil {
				secrets = append(secrets, dv)
			}
		}
		// Longest first, so that no part of a longer secret survives.
		sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
		for _, v := range secrets {
			if len(v) >= 4 && v != Redacted {
				text = strings.ReplaceAll(text, v, Redacted)
			}
		}
	}
	return text
}
