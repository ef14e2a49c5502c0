#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the page's errors.html from include/stguard/error_codes.def, the one list of
error codes: each code with its verdict and the comment above its row (what it means),
under the list's section titles. The page links every error code it shows to its entry
(errors.html#Name), so an explanation is never a copy that could drift from the list.

Usage: make_error_page.py ERROR_CODES_DEF OUT_HTML
"""

import html
import re
import sys

ROW = re.compile(r"^STGUARD_ERROR_CODE\((\w+),\s*\w+,\s*(true|false),\s*(\w+)\)")
VERDICT_WORDS = {"Valid": "valid", "Invalid": "invalid: a rule of the format does not hold",
                 "Refused": "refused: loading it could run code of the file's choosing",
                 "Error": "error: no verdict on the file"}


def entries(lines):
    """Yields ("section", title) and ("code", name, verdict, explanation) in file order."""
    comment = []
    for line in lines:
        line = line.strip()
        if line.startswith("// =="):
            yield ("section", line[5:].strip().rstrip("."))
            comment = []
        elif line.startswith("//"):
            comment.append(line[2:].strip())
        elif ROW.match(line):
            name, _, verdict = ROW.match(line).groups()
            yield ("code", name, verdict, " ".join(comment))
            comment = []
        else:
            comment = []


def page(lines):
    out = ["<!doctype html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           "<title>stguard error codes</title>", '<link rel="stylesheet" href="style.css">',
           "</head>", "<body>", "<main>", "<h1>stguard error codes</h1>",
           "<p>What each code on a result means. The verdict says what it means for the "
           "file. Generated from the library's list of codes.</p>"]
    open_list = False
    for entry in entries(lines):
        if entry[0] == "section":
            if open_list:
                out.append("</dl>")
            out.append("<h2>%s</h2>" % html.escape(entry[1]))
            out.append('<dl class="error-codes">')
            open_list = True
            continue
        _, name, verdict, text = entry
        if name == "Ok":
            continue
        if not open_list:
            out.append('<dl class="error-codes">')
            open_list = True
        out.append('<dt id="%s"><code>%s</code> <span class="verdict-%s">%s</span></dt>' %
                   (name, name, verdict.lower(), html.escape(VERDICT_WORDS[verdict])))
        out.append("<dd>%s</dd>" % html.escape(text[:1].upper() + text[1:] + "."
                                               if text else "(no description)"))
    if open_list:
        out.append("</dl>")
    out += ["</main>", "</body>", "</html>", ""]
    return "\n".join(out)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as source:
        text = page(source.read().splitlines())
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        out.write(text)


if __name__ == "__main__":
    main()
