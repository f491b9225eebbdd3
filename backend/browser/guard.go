package browser

import "regexp"

// fakeInput lists the patterns of scripts that fake a person's input. Pages can tell such
// events apart (event.isTrusted is false), frameworks often ignore them, and they skip what
// real input does (focus, hover, default actions), so the agent is sent to the real tools.
var fakeInput = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`\.\s*click\s*\(`), ".click()"},
	{regexp.MustCompile(`\.\s*(value|checked|selectedIndex|files)\s*=[^=]`), "assigning .value/.checked/.selectedIndex"},
	{regexp.MustCompile(`dispatchEvent\s*\(\s*new\s+(Mouse|Pointer|Keyboard|Input|Touch|Focus|Wheel|Drag|Submit)?Event\b`), "dispatchEvent(new …Event)"},
	{regexp.MustCompile(`new\s+(Mouse|Pointer|Keyboard|Touch|Wheel|Drag)Event\s*\(`), "constructing a synthetic input event"},
	{regexp.MustCompile(`\.\s*(submit|requestSubmit)\s*\(`), ".submit()"},
	{regexp.MustCompile(`execCommand\s*\(\s*['"]insertText`), "execCommand('insertText')"},
}

// FakesInput reports how code fakes user input ("" if it does not): .click(), assigning
// .value, dispatchEvent(new MouseEvent(…)) and the like.
func FakesInput(code string) string {
	for _, f := range fakeInput {
		if f.re.MatchString(code) {
			return f.what
		}
	}
	return ""
}
