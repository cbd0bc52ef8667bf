#!/usr/bin/env python3
"""The command table (cli/commands.h) as a user meets it: `policyc help`
lists every command; bash completion (`policyc completion bash`) completes
those commands and each command's flags; every flag a command takes is
written in its usage (`policyc help COMMAND`); `help COMMAND` is the
command's own `--help`.

usage: tests/cli/command_table.py --policyc build/policyc
"""
import argparse
import re
import subprocess
import sys


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def complete(policyc, script, words, cword):
    """What bash completes for `words` with the cursor on word `cword`."""
    line = " ".join(f"'{w}'" for w in words)
    probe = (f"source /dev/stdin; COMP_WORDS=({line}); COMP_CWORD={cword}; _policyc; "
             "printf '%s\\n' \"${COMPREPLY[@]}\"")
    out = run(["bash", "-c", probe], input=script)
    if out.returncode != 0:
        raise SystemExit(f"bash completion failed: {out.stderr}")
    return [w for w in out.stdout.split("\n") if w]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--policyc", required=True)
    policyc = parser.parse_args().policyc
    failures = []
    checks = 0

    help_text = run([policyc, "help"]).stdout
    listed = re.findall(r"^  (\S+)\s", help_text.split("commands:\n", 1)[1], re.M)
    script = run([policyc, "completion", "bash"]).stdout
    checks += 1
    completed = complete(policyc, script, ["policyc", ""], 1)
    if sorted(completed) != sorted(listed):
        failures.append(f"commands completed {sorted(completed)} but help lists {sorted(listed)}")
    checks += 1
    if complete(policyc, script, ["policyc", "sch"], 1) != ["schedule"]:
        failures.append("`policyc sch` does not complete to `schedule`")

    for name in listed:
        usage = run([policyc, "help", name])
        own = run([policyc, name, "--help"])
        checks += 1
        if usage.returncode != 0 or usage.stdout != own.stdout:
            failures.append(f"`policyc help {name}` is not `policyc {name} --help`")
        flags = [f for f in complete(policyc, script, ["policyc", name, "--"], 2) if f != "--help"]
        for flag in flags:
            checks += 1
            if not re.search(re.escape(flag) + r"(?![\w-])", usage.stdout):
                failures.append(f"`policyc {name}` takes {flag}, which its usage does not mention")
        checks += 1
        if name in ("check", "schedule", "serve") and "--policy" not in flags:
            failures.append(f"`policyc {name} --` does not complete --policy")

    checks += 1
    if run([policyc, "help", "nonesuch"]).returncode != 2:
        failures.append("`policyc help nonesuch` does not exit 2")
    for shell in ("zsh", "fish"):
        checks += 1
        out = run([policyc, "completion", shell])
        cluster_flag = "-l cluster" if shell == "fish" else "--cluster"
        if out.returncode != 0 or "kubectl-policyc" not in out.stdout or cluster_flag not in out.stdout:
            failures.append(f"`policyc completion {shell}` does not complete policyc and kubectl-policyc flags")

    # As a kubectl plugin: the same program under kubectl's name for it.
    import os
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        plugin = os.path.join(tmp, "kubectl-policyc")
        os.symlink(os.path.abspath(policyc), plugin)
        checks += 1
        out = run([plugin, "help"])
        if out.returncode != 0 or out.stdout != help_text:
            failures.append("`kubectl-policyc help` is not `policyc help`")
        # kubectl's plugin completion: `kubectl policyc <TAB>` runs
        # kubectl_complete-policyc with the words typed; candidates, then cobra's directive.
        completer = os.path.join(tmp, "kubectl_complete-policyc")
        os.symlink(os.path.abspath(policyc), completer)
        for words, want in [(["ch"], ["check", ":4"]), (["check", "--clu"], ["--cluster", ":4"]),
                            (["schedule", "--all-n"], ["--all-nodes", ":4"]), (["check", "--cluster", "ex"], [":0"]),
                            (["drain", "-"], None)]:
            checks += 1
            out = run([completer] + words)
            lines = out.stdout.splitlines()
            if want is None:  # every flag of drain, from the table
                ok = out.returncode == 0 and lines[-1] == ":4" and "--cluster" in lines and "--help" in lines
            else:
                ok = out.returncode == 0 and lines == want
            if not ok:
                failures.append(f"kubectl_complete-policyc {' '.join(words)} printed {lines}, not {want}")

    for f in failures:
        print(f"FAIL: {f}")
    print(f"{checks - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
