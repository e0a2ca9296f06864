#!/usr/bin/env python3
"""Which files and folders a loopr run creates (issue 47 items 2-3): reads an strace log written
with `strace -ff -y -z -k -e trace=openat,open,creat,mkdir,mkdirat,rename,renameat2,link,linkat,
symlink,symlinkat,unlink,unlinkat,chdir,fchdir,execve -o LOG` and prints every new inode (an
O_CREAT open of a path that did not exist, mkdir, symlink) grouped by a pattern of its path, by process
and by the first loopr function on the stack (when the log has -k stacks). Renames into place
are counted too (they make no inode but say which writes are temp + rename).

    created_files.py LOG [--base SHORTER_LOG] [--root DIR] [--per N] [--stacks]

--base subtracts a shorter run of the same bench (the set-up drops out); --per N divides by N
(the extra iterations); --root strips DIR from paths. Logs written with -ff (LOG.PID) are read
together. Hard links (libgit2 links each loose object from its temp file) make no inode. A
libgit2 frame is the nearest exported symbol (the distribution's library has no symbols of its
own), so read it as "inside libgit2, called from" the loopr function beside it.
A figure, not a test: nothing here asserts.
"""
import collections
import re
import sys

CALL = re.compile(r'^(?:(\d+) +)?(\w+)\((.*)\) += (-?\d+)(?:<([^>]*)>)?')
STACK = re.compile(r'^ > ([^(\s]+)\((.*?)\+0x[0-9a-f]+\)')
STR = re.compile(r'"((?:[^"\\]|\\.)*)"')
FDPATH = re.compile(r'(?:AT_FDCWD|\d+)<([^>]*)>')

# Patterns, first match wins: (regex on the path, group name).
PATTERNS = [
    (r'^/?(newroot|oldroot)(/|$)', "bubblewrap's mount points (in its own tmpfs, not the disk)"),
    (r'/\.loopr/state/.*\.log$', 'RocksDB WAL'),
    (r'/\.loopr/state/.*\.sst$', 'RocksDB SST'),
    (r'/\.loopr/state/MANIFEST', 'RocksDB MANIFEST'),
    (r'/\.loopr/state/(OPTIONS|CURRENT|IDENTITY|LOCK|LOG|.*dbtmp)', 'RocksDB other'),
    (r'/\.loopr/state', 'RocksDB other'),
    (r'/\.loopr/logs/loops/[^/]+/iterations/\d+/[^/]+$', 'iteration file (logs/loops/ID/iterations/N/NAME)'),
    (r'/\.loopr/logs/loops/[^/]+/iterations/\d+$', 'iteration folder (logs/loops/ID/iterations/N)'),
    (r'/\.loopr/logs/loops/[^/]+(/[^/]+)?$', 'loop log folder or file (logs/loops/ID/…)'),
    (r'/\.loopr/logs/', 'other .loopr/logs'),
    (r'/\.loopr/worktrees/[^/]+$', 'loop worktree folder'),
    (r'/\.loopr/worktrees/', 'file in a loop worktree'),
    (r'/\.loopr/', 'other .loopr'),
    (r'/objects/tmp_object_git2_', 'git loose object (libgit2: temp file, linked into objects/xx/)'),
    (r'/objects/[0-9a-f]{2}/[0-9a-f]{38}$', 'git loose object (final name)'),
    (r'/objects/[0-9a-f]{2}$', 'git objects/xx fan-out folder'),
    (r'/objects/pack/', 'git pack files'),
    (r'/objects/[0-9a-f]{2}/tmp_obj_', 'git loose object (git CLI temp)'),
    (r'/index\.lock$', 'git index.lock (new index, renamed)'),
    (r'/index$', 'git index'),
    (r'/logs/(refs|HEAD)', 'git reflog'),
    (r'/refs/.*\.lock$', 'git ref .lock (renamed into the ref)'),
    (r'/HEAD\.lock$', 'git HEAD.lock'),
    (r'/refs/', 'git ref'),
    (r'/worktrees/[^/]+$', 'git worktree admin folder'),
    (r'/worktrees/[^/]+/', 'git worktree admin file'),
    (r'\.git/.*\.lock$', 'git other .lock'),
    (r'\.git/', 'git other'),
    (r'^/tmp/[^/]*(bwrap|loopr-sandbox|sandbox)', 'sandbox temp'),
    (r'^/(proc|sys|dev)/', 'kernel (/proc, /sys, /dev)'),
]
PATTERNS = [(re.compile(p), g) for p, g in PATTERNS]


def group(path):
    for rx, name in PATTERNS:
        if rx.search(path):
            return name
    return 'other'


def resolve(base, p):
    if p.startswith('/'):
        return p
    return (base.rstrip('/') + '/' + p) if base else p


def count(log, root):
    """Counters of one strace log (-o LOG or -ff -o LOG, i.e. LOG.PID files)."""
    exists = set()
    cwd = {}
    comm = {}
    created = collections.Counter()    # (group, kind) -> n
    by_proc = collections.Counter()    # (proc, group) -> n
    by_func = collections.Counter()    # (func, group) -> n
    examples = {}
    pending = None  # (group, kind, proc) waiting for its stack

    def flush():
        nonlocal pending
        if pending:
            g, kind, proc, frames = pending
            lib = next((f for f in frames if f.startswith(('git_', 'rocksdb::', 'std::filesystem'))), '')
            own = next((f for f in frames if 'loopr::' in f[:60]), '')
            func = ' ← '.join(x for x in (short(lib), short(own)) if x) or (short(frames[0]) if frames else '?')
            by_func[(func, g)] += 1
        pending = None

    def short(func):
        # The name without its arguments: cut at the '(' that opens them (an "(anonymous
        # namespace)" or a lambda's "{lambda(" is part of the name).
        func = func.replace('(anonymous namespace)', '{anon}')
        depth = 0
        for i, c in enumerate(func):
            if c == '<':
                depth += 1
            elif c == '>':
                depth -= 1
            elif c == '(' and depth == 0:
                func = func[:i]
                break
        func = re.sub(r'<[^<>]*(<[^<>]*(<[^<>]*>[^<>]*)*>[^<>]*)*>', '<…>', func)
        return func.replace('loopr::', '')[-80:]

    def note(pid, g, kind, path):
        nonlocal pending
        flush()
        created[(g, kind)] += 1
        proc = comm.get(pid, '?')
        examples.setdefault(g, path)
        if kind == 'link':  # a second name, no new inode
            return
        by_proc[(proc, g)] += 1
        pending = (g, kind, proc, [])

    import glob
    files = sorted((x for x in glob.glob(log + '.*') if x.rsplit('.', 1)[1].isdigit()), key=lambda x: int(x.rsplit('.', 1)[1])) or [log]
    for fname in files:
      filepid = fname.rsplit('.', 1)[1] if fname != log else '0'
      with open(fname, errors='replace') as f:
        for line in f:
            s = STACK.match(line)
            if s:
                if pending is not None:
                    pending[3].append(s.group(2) or s.group(1))
                continue
            m = CALL.match(line)
            if not m:
                continue
            pid, call, argstr, ret, retpath = m.groups()
            pid = pid or filepid
            flush()
            if int(ret) < 0:
                continue
            fdp = FDPATH.findall(argstr)
            strs = [bytes(x, 'utf-8').decode('unicode_escape', 'replace') for x in STR.findall(argstr)]
            base = fdp[0] if fdp else cwd.get(pid, '')
            if 'AT_FDCWD<' in argstr:
                cwd[pid] = re.search(r'AT_FDCWD<([^>]*)>', argstr).group(1)
            if call == 'execve' and strs:
                comm[pid] = strs[0].rsplit('/', 1)[-1]
                continue
            if call in ('chdir',) and strs:
                cwd[pid] = resolve(cwd.get(pid, ''), strs[0])
                continue
            if call == 'fchdir' and fdp:
                cwd[pid] = fdp[0]
                continue
            if pid not in comm:
                comm[pid] = 'thread of the traced process'
            if call in ('openat', 'open', 'creat'):
                path = retpath or resolve(base, strs[0] if strs else '')
                path = path.replace(root, '') if root else path
                if 'O_CREAT' in argstr or call == 'creat':
                    if 'O_EXCL' in argstr or path not in exists:
                        note(pid, group(path), 'open', path)
                    exists.add(path)
                elif 'O_TMPFILE' in argstr:
                    note(pid, group(path), 'tmpfile', path)
                else:
                    exists.add(path)
            elif call in ('mkdir', 'mkdirat', 'symlink', 'symlinkat', 'link', 'linkat'):
                target = strs[-1] if strs else ''
                b = fdp[-1] if (fdp and call.endswith('at')) else cwd.get(pid, '')
                path = resolve(b, target)
                path = path.replace(root, '') if root else path
                exists.add(path)
                note(pid, group(path), call.rstrip('at') if call.endswith('at') else call, path)
            elif call in ('rename', 'renameat', 'renameat2') and len(strs) >= 2:
                b1 = fdp[0] if fdp else cwd.get(pid, '')
                b2 = fdp[1] if len(fdp) > 1 else b1
                src = resolve(b1, strs[0])
                dst = resolve(b2, strs[1])
                if root:
                    src, dst = src.replace(root, ''), dst.replace(root, '')
                exists.discard(src)
                exists.add(dst)
                created[(group(dst), 'rename into')] += 1
            elif call in ('unlink', 'unlinkat') and strs:
                b = fdp[0] if fdp else cwd.get(pid, '')
                p = resolve(b, strs[0])
                p = p.replace(root, '') if root else p
                exists.discard(p)
                created[(group(p), 'unlink')] += 1
      flush()
    return created, by_proc, by_func, examples


def main():
    args = sys.argv[1:]
    log = args[0]
    root = args[args.index('--root') + 1] if '--root' in args else ''
    per = float(args[args.index('--per') + 1]) if '--per' in args else 1.0
    show_stacks = '--stacks' in args
    created, by_proc, by_func, examples = count(log, root)
    if '--base' in args:  # subtract a shorter run of the same thing: what the extra part made
        base = count(args[args.index('--base') + 1], root)
        for mine, theirs in zip((created, by_proc, by_func), base[:3]):
            mine.subtract(theirs)

    kinds = ['open', 'tmpfile', 'mkdir', 'link', 'symlink', 'rename into', 'unlink']
    groups = sorted({g for g, _ in created},
                    key=lambda g: -sum(created[(g, k)] for k in kinds[:5]))
    print(f'| what (path pattern) | new files (and symlinks) | new folders | hard links (no new inode) | renamed into place | unlinked | example |')
    print('|---|---|---|---|---|---|---|')
    tot = collections.Counter()
    for g in groups:
        row = [created[(g, 'open')] + created[(g, 'tmpfile')] + created[(g, 'symlink')],
               created[(g, 'mkdir')], created[(g, 'link')], created[(g, 'rename into')],
               created[(g, 'unlink')]]
        for i, v in enumerate(row):
            tot[i] += v
        print(f'| {g} | ' + ' | '.join(f'{v / per:.1f}' for v in row) + f' | `{examples.get(g, "")}` |')
    print('| **total** | ' + ' | '.join(f'**{tot[i] / per:.1f}**' for i in range(5)) + ' | |')
    table('process', by_proc, per)
    if show_stacks:
        table('library frame ← innermost loopr function', by_func, per)


def table(key, counts, per):
    print()
    print(f'| {key} | what | new inodes |')
    print('|---|---|---|')
    for (k, g), n in sorted(counts.items(), key=lambda x: -x[1]):
        if abs(n) >= 1e-9:
            print(f'| `{k}` | {g} | {n / per:.1f} |')


if __name__ == '__main__':
    main()
