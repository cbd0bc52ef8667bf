#!/usr/bin/env python3
"""cel-spec's conformance tests, converted to policyc's own case list.

Reads the `tests/simple/testdata/*.textproto` files of google/cel-spec at the
tag the cel-go of kube-scheduler 1.34 builds with (cel-go v0.26.0, which
requires cel.dev/expr v0.24.0) and writes `cases.json` beside this script:
for every test its file, section, name, expression, what it must give (a
value, or an error and its message) and, when kube's DRA environment cannot
run it, why not. `celspec_test` (tests/unit/cel/celspec_test.cpp) runs the
kept ones through the evaluator and the native kernels.

    python3 tests/cel-spec/convert.py --repo /work/.mirror/google+cel-spec/repo --tag v0.24.0

Only facts are taken (expressions and results); the textproto files are not
copied. A test is left out, with its reason, when it needs what kube's DRA
environment does not declare: protobuf messages and enums, declared
variables or bindings, a container, unknowns, a library kube leaves out
(math, encoders, blocks), or evaluation unchecked (kube checks
every expression).
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys

# Libraries in cel-spec's suite that kube's DRA environment does not declare:
# its base (k8s.io/apiserver/pkg/cel/environment/base.go, 1.34) with
# cel.bind added (k8s.io/dynamic-resource-allocation/cel/compile.go).
NOT_IN_KUBE = {
    "math_ext": "the math extension (kube's environment leaves it out)",
    "encoders_ext": "the encoders extension (kube's environment leaves it out)",
    "block_ext": "cel.block (kube's environment leaves it out)",
}
PROTO = re.compile(r"TestAllTypes|NestedTestAllTypes|TestRequired|GlobalEnum|google\.protobuf|cel\.expr\.|proto[23]\.|"
                   r"\.NestedEnum|NestedMessage|\bEnum\b")


class Parser:
    """A textproto reader: enough of the text format for cel-spec's files."""

    TOKEN = re.compile(r"""\s+|\#[^\n]*|(?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|(?P<punct>[{}<>:\[\],;])|"""
                       r"""(?P<num>[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?(?![A-Za-z_]))|(?P<word>[-+]?[A-Za-z0-9_./]+)""")

    def __init__(self, text):
        self.tokens = []
        at = 0
        while at < len(text):
            m = self.TOKEN.match(text, at)
            if not m:
                raise ValueError(f"cannot read textproto at {text[at:at + 40]!r}")
            at = m.end()
            if m.lastgroup:
                self.tokens.append((m.lastgroup, m.group(m.lastgroup)))
        self.at = 0

    def peek(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else (None, None)

    def take(self):
        t = self.peek()
        self.at += 1
        return t

    def message(self, end=None):
        """A message's fields: name -> list of values (a value is bytes, a word or a dict)."""
        fields = {}
        while True:
            kind, text = self.peek()
            if kind is None or (kind == "punct" and text == end):
                if end:
                    self.take()
                return fields
            if kind == "punct" and text in ",;":
                self.take()
                continue
            _, name = self.take()
            if name == "[":  # an extension or Any's type URL: [name]
                name = "[" + self.take()[1] + "]"
                self.take()
            kind, text = self.peek()
            if kind == "punct" and text == ":":
                self.take()
                kind, text = self.peek()
            fields.setdefault(name, []).extend(self.values())

    def values(self):
        kind, text = self.peek()
        if kind == "punct" and text == "[":
            self.take()
            out = []
            while True:
                kind, text = self.peek()
                if kind == "punct" and text == "]":
                    self.take()
                    return out
                if kind == "punct" and text == ",":
                    self.take()
                    continue
                out.extend(self.values())
        return [self.value()]

    def value(self):
        kind, text = self.take()
        if kind == "punct" and text in "{<":
            return self.message("}" if text == "{" else ">")
        if kind == "str":
            data = unescape(text[1:-1])
            while self.peek()[0] == "str":  # adjacent strings concatenate
                data += unescape(self.take()[1][1:-1])
            return data
        return text  # a number, bool or enum name


def unescape(s):
    """A textproto string's bytes."""
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        n = s[i + 1]
        simple = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92, "'": 39, '"': 34, "?": 63}
        if n in simple:
            out.append(simple[n])
            i += 2
        elif n in "01234567":
            j = i + 1
            while j < len(s) and j < i + 4 and s[j] in "01234567":
                j += 1
            out.append(int(s[i + 1:j], 8) & 0xFF)
            i = j
        elif n in "xX":
            j = i + 2
            while j < len(s) and j < i + 4 and s[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(s[i + 2:j], 16))
            i = j
        elif n in "uU":
            width = 4 if n == "u" else 8
            out += chr(int(s[i + 2:i + 2 + width], 16)).encode("utf-8")
            i += 2 + width
        else:
            raise ValueError(f"unknown escape \\{n}")
    return bytes(out)


def text(v):
    return v.decode("utf-8") if isinstance(v, bytes) else v


def one(fields, name, default=None):
    v = fields.get(name)
    return v[-1] if v else default


def number(word):
    w = word.lower()
    if w in ("inf", "infinity", "+inf"):
        return "Infinity"
    if w in ("-inf", "-infinity"):
        return "-Infinity"
    if w == "nan":
        return "NaN"
    return float(word)


def value_of(v):
    """A cel.expr.Value as JSON; raises LookupError for protobuf objects and enums."""
    if "null_value" in v:
        return {"null": True}
    if "bool_value" in v:
        return {"bool": one(v, "bool_value") == "true"}
    if "int64_value" in v:
        return {"int": str(int(one(v, "int64_value")))}
    if "uint64_value" in v:
        return {"uint": str(int(one(v, "uint64_value")))}
    if "double_value" in v:
        d = number(one(v, "double_value"))
        return {"double": d if isinstance(d, str) else repr(d)}
    if "string_value" in v:
        return {"string": text(one(v, "string_value"))}
    if "bytes_value" in v:
        return {"bytes": one(v, "bytes_value").hex()}
    if "list_value" in v:
        lv = one(v, "list_value") or {}
        return {"list": [value_of(x) for x in lv.get("values", [])]}
    if "map_value" in v:
        mv = one(v, "map_value") or {}
        return {"map": [[value_of(one(e, "key")), value_of(one(e, "value"))] for e in mv.get("entries", [])]}
    if "type_value" in v:
        return {"type": text(one(v, "type_value"))}
    if "object_value" in v or "enum_value" in v:
        raise LookupError("protobuf messages")
    if not v:
        raise LookupError("an empty value")
    raise LookupError(f"a value of kind {sorted(v)}")


def cel_string(data):
    """A CEL string literal of `data` (text), escaped."""
    out = []
    for ch in data:
        o = ord(ch)
        if ch in "\\'":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\x{o:02x}")
        elif 0xD800 <= o <= 0xDFFF:  # never in valid text
            raise LookupError("a string that is not UTF-8")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def literal(v):
    """A CEL expression equal to expected value `v` (aggregates' parts as dyn)."""
    if "null" in v:
        return "null"
    if "bool" in v:
        return "true" if v["bool"] else "false"
    if "int" in v:
        i = int(v["int"])
        return f"({i})" if i != -(1 << 63) else "(-9223372036854775807 - 1)"
    if "uint" in v:
        return f"{v['uint']}u"
    if "double" in v:
        d = v["double"]
        if d in ("NaN", "Infinity", "-Infinity"):
            return f"double('{d}')"
        text = d if ("e" in d or "." in d or "n" in d) else d + ".0"
        return f"({text})"
    if "string" in v:
        return cel_string(v["string"])
    if "bytes" in v:
        return "b'" + "".join(f"\\x{b:02x}" for b in bytes.fromhex(v["bytes"])) + "'"
    if "list" in v:
        return "[" + ", ".join(f"dyn({literal(x)})" for x in v["list"]) + "]"
    if "map" in v:
        return "{" + ", ".join(f"dyn({literal(k)}): dyn({literal(x)})" for k, x in v["map"]) + "}"
    if "type" in v:
        return v["type"]
    raise LookupError("a value with no literal")


def type_of(v):
    for kind, name in (("null", "null_type"), ("bool", "bool"), ("int", "int"), ("uint", "uint"), ("double", "double"),
                       ("string", "string"), ("bytes", "bytes"), ("list", "list"), ("map", "map"), ("type", "type")):
        if kind in v:
            return name
    raise LookupError("a value of no type")


def selector(case):
    """The test as a device selector: true exactly when the expression gives
    the expected value, of the expected type; an error when it errs."""
    expr = case["expr"]
    if "error" in case:
        return f"cel.bind(result, {expr}, type(result) == type(result))"
    v = case["value"]
    if v.get("double") == "NaN":
        return f"cel.bind(result, {expr}, type(result) == double && result != result)"
    return f"cel.bind(result, {expr}, type(result) == {type_of(v)} && result == {literal(v)})"


def errors_of(e):
    return [text(one(x, "message", b"")) for x in e.get("errors", [])]


def convert(file_name, data):
    top = Parser(data.decode("utf-8")).message()
    cases = []
    seen = {}
    for section in top.get("section", []):
        for t in section.get("test", []):
            case = {"file": file_name, "section": text(one(section, "name", b"")), "name": text(one(t, "name", b"")),
                    "expr": text(one(t, "expr", b""))}
            key = f"{file_name}/{case['section']}/{case['name']}"
            seen[key] = seen.get(key, 0) + 1
            case["id"] = key if seen[key] == 1 else f"{key}#{seen[key]}"  # a few names repeat in a section
            for flag in ("disable_macros", "disable_check", "check_only"):
                if one(t, flag) == "true":
                    case[flag] = True
            why = None
            try:
                if "value" in t:
                    case["value"] = value_of(one(t, "value"))
                elif "typed_result" in t:
                    r = one(t, "typed_result")
                    if "result" in r:
                        case["value"] = value_of(one(r, "result"))
                elif "eval_error" in t:
                    case["error"] = errors_of(one(t, "eval_error"))
                elif "any_eval_errors" in t:
                    case["error"] = [m for es in one(t, "any_eval_errors").get("errors", []) for m in errors_of(es)]
                elif "unknown" in t or "any_unknowns" in t:
                    why = "unknowns (partial evaluation)"
                else:
                    case["value"] = {"bool": True}  # the default matcher
            except LookupError as e:
                why = str(e)
            if why is None and file_name in NOT_IN_KUBE:
                why = NOT_IN_KUBE[file_name]
            if why is None and (t.get("type_env") or t.get("bindings")):
                why = "declared variables"
            if why is None and PROTO.search(case["expr"]):
                why = "protobuf messages"
            if why is None and one(t, "container"):
                why = "a container (protobuf namespace)"
            if why is None and case.get("check_only"):
                why = "type-check only"
            if why is None and case.get("disable_macros"):
                why = "macros disabled (kube's environment expands them)"
            if why is None and case.get("disable_check"):
                why = "evaluated unchecked (kube checks every expression)"
            if why is None and one(t, "locale"):
                why = "a locale"
            if why is None:
                try:
                    case["selector"] = selector(case)
                except LookupError as e:
                    why = str(e)
            if why:
                case["left_out"] = why
            cases.append(case)
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", required=True, help="a git checkout of google/cel-spec")
    parser.add_argument("--tag", default="v0.24.0")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases.json"))
    a = parser.parse_args()
    listing = subprocess.run(["git", "-C", a.repo, "ls-tree", "--name-only", a.tag, "tests/simple/testdata/"],
                             check=True, capture_output=True, text=True).stdout.split()
    cases = []
    for path in sorted(p for p in listing if p.endswith(".textproto")):
        data = subprocess.run(["git", "-C", a.repo, "show", f"{a.tag}:{path}"], check=True, capture_output=True).stdout
        cases += convert(os.path.basename(path)[:-len(".textproto")], data)
    with open(a.out, "w") as f:
        json.dump({"source": f"google/cel-spec {a.tag} tests/simple/testdata", "cases": cases}, f, indent=0,
                  ensure_ascii=False)
        f.write("\n")
    kept = sum(1 for c in cases if "left_out" not in c)
    reasons = {}
    for c in cases:
        if "left_out" in c:
            reasons[c["left_out"]] = reasons.get(c["left_out"], 0) + 1
    print(f"{len(cases)} tests, {kept} kept", file=sys.stderr)
    for why, n in sorted(reasons.items(), key=lambda x: -x[1]):
        print(f"  {n:4} left out: {why}", file=sys.stderr)


if __name__ == "__main__":
    main()
