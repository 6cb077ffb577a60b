#!/usr/bin/env python3
"""DoT and DoH queries per second: dnsmoat beside unbound and dnsdist, in one interleaved run.

Every server runs on 127.0.0.1 only and answers the same local record (bench.test A 192.0.2.1)
itself, so no upstream is ever asked and the query path plus TLS (and HTTP/2 for DoH) is the
whole cost:

  * dnsmoat: [local.records], upstream a closed loopback port it never needs, no query log,
    no API, no control socket;
  * unbound: local-zone/local-data, iterator only, num-threads 1, "." refused, DoT on tls-port
    and DoH on https-port (when `unbound -V` shows it was built with nghttp2);
  * dnsdist: QNameRule + SpoofAction (no backend at all), addTLSLocal and addDOHLocal (when
    `dnsdist --version` lists them).

All three use one test certificate (EC P-256, SAN DNS:dns.test and IP:127.0.0.1) from a test CA
made with the openssl CLI in a temporary directory. The load is dnsperf -m dot and -m doh (POST
by default) with --clients connections that stay open for the whole run: each connection does
one TLS handshake when the run starts and then carries every query (DoT: pipelined,
length-prefixed; DoH: HTTP/2 streams, -q in flight), so the figures are the steady-state cost of
queries on established TLS sessions, not of handshakes. The report's reconnects column shows that
no connection was re-established during a run. (dnsperf 2.10 would do a full handshake on a
reconnect: it does not resume sessions.) Whether each server resumes a TLS session on a new
connection is probed separately with Python's ssl module, and reported beside the results.

Per repetition, each protocol runs on every server back to back, in an order that rotates
between repetitions; medians over --reps are reported with the ratio against dnsmoat. Timed
phases hold the shared bench lock (the flock in <tmpdir>/ceo-bench.lock, as
shared/bench/dnsbench.py). Progress goes to stderr, the markdown for docs/benchmarks.md to stdout.

  bench/encrypted_peers.py --duration 10 --clients 4 --reps 3 --json encrypted.json
  bench/encrypted_peers.py --dry-run          # configs, certificates, checks; starts nothing
"""

import argparse
import fcntl
import json
import os
import re
import shlex
import shutil
import signal
import socket
import ssl
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_BINARY = "build/release/src/app/dnsmoat"

NAME = "bench.test"
ADDR = "192.0.2.1"
TLS_NAME = "dns.test"
DOH_PATH = "/dns-query"
TTL = 300
SERVERS = ("dnsmoat", "unbound", "dnsdist")
PROTOS = ("dot", "doh")
INSTALL_HINT = "sudo apt-get install unbound dnsdist"

PROCS = []  # every long-running process we started (Popen, own process group)


def log(*a):
    print("[encrypted]", *a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- processes
def run_bounded(argv, timeout, cwd=None):
    """Runs argv in its own process group with a hard timeout; returns (rc, stdout+stderr).
    rc is None when it timed out (the group is killed)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, cwd=cwd, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        kill_group(p, 0)
        out, _ = p.communicate()
        return None, out
    finally:
        if p.poll() is None:  # an exception (signal, watchdog) while waiting
            kill_group(p, 0)


def kill_group(p, grace):
    """Ends the process group of our child p (started with start_new_session, so its pid is the
    group's id): SIGTERM and up to grace seconds to exit, then SIGKILL."""
    if p.poll() is not None:
        return
    if grace > 0:
        try:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(grace)
            return
        except OSError:
            pass
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        p.wait(5)
    except subprocess.TimeoutExpired:
        pass


def start_daemon(name, argv, logdir):
    lf = open(os.path.join(logdir, name + ".log"), "w")
    try:
        p = subprocess.Popen(argv, stdout=lf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)
    finally:
        lf.close()
    PROCS.append(p)
    return p


def cleanup():
    for p in reversed(PROCS):
        kill_group(p, 5)
    PROCS.clear()


def cpu_seconds(pid):
    """utime + stime of a process (all its threads)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def find_exe(name):
    extra = ["/usr/sbin", "/usr/local/sbin", "/sbin"]
    return shutil.which(name, path=os.pathsep.join([os.environ.get("PATH", "")] + extra))


class Lock:
    """The shared bench flock (same file as shared/bench/dnsbench.py), with a bounded wait."""

    def __init__(self, path, wait):
        self.path, self.wait, self.fd = path, wait, None

    def __enter__(self):
        if not self.path:
            return self
        self.fd = open(self.path, "a")
        t0 = time.monotonic()
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() - t0 > self.wait:
                    self.fd.close()
                    raise RuntimeError("bench lock %s still held by someone else after %d s "
                                       "(--lock '' to ignore it)" % (self.path, self.wait))
                time.sleep(0.2)
        if time.monotonic() - t0 > 1:
            log("waited %.1f s for the bench lock" % (time.monotonic() - t0))
        return self

    def __exit__(self, *exc):
        if self.fd:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            self.fd.close()
            self.fd = None


# --------------------------------------------------------------------------- ports
def free_ports(count):
    """count distinct ports free on 127.0.0.1 for both TCP and UDP."""
    ports = []
    for _ in range(200):
        if len(ports) == count:
            break
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t:
            t.bind(("127.0.0.1", 0))
            port = t.getsockname()[1]
            try:
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                    u.bind(("127.0.0.1", port))
            except OSError:
                continue
        if port not in ports:
            ports.append(port)
    if len(ports) == count:
        return ports
    raise RuntimeError("could not find %d free ports on 127.0.0.1" % count)


# --------------------------------------------------------------------------- DNS wire
def build_query(name, qid):
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\x00" + struct.pack(">HH", 1, 1)


def _skip_name(data, off):
    while True:
        n = data[off]
        if n == 0:
            return off + 1
        if n & 0xC0 == 0xC0:
            return off + 2
        off += n + 1


def parse_answer(data, qid):
    """(rcode, [A addresses]) of a response to qid, or None."""
    if len(data) < 12 or struct.unpack(">H", data[:2])[0] != qid or not data[2] & 0x80:
        return None
    rcode = data[3] & 0x0F
    qd, an = struct.unpack(">HH", data[4:8])
    off = 12
    addrs = []
    try:
        for _ in range(qd):
            off = _skip_name(data, off) + 4
        for _ in range(an):
            off = _skip_name(data, off)
            rtype, _cls, _ttl, rdlen = struct.unpack(">HHIH", data[off:off + 10])
            off += 10
            if rtype == 1 and rdlen == 4:
                addrs.append(socket.inet_ntoa(data[off:off + 4]))
            off += rdlen
    except (IndexError, struct.error):
        return None
    return rcode, addrs


def udp_probe(port, timeout=0.3):
    qid = int.from_bytes(os.urandom(2), "big")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        try:
            s.sendto(build_query(NAME, qid), ("127.0.0.1", port))
            return parse_answer(s.recv(4096), qid)
        except OSError:
            return None


def tcp_open(port, timeout=0.3):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout):
            return True
    except OSError:
        return False


def _recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("connection closed after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return buf


def dot_probe(port, ca, timeout=5.0):
    """One DoT query on a verified TLS connection (CA, name dns.test), then a second connection
    offering the first one's session: TLS version, cipher, answer, and whether it resumed."""
    ctx = ssl.create_default_context(cafile=ca)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2

    def one_query(session):
        qid = int.from_bytes(os.urandom(2), "big")
        q = build_query(NAME, qid)
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as raw:
            with ctx.wrap_socket(raw, server_hostname=TLS_NAME, session=session) as s:
                s.sendall(struct.pack(">H", len(q)) + q)
                n = struct.unpack(">H", _recv_exact(s, 2))[0]
                ans = parse_answer(_recv_exact(s, n), qid)
                if ans is None or ans[0] != 0 or ADDR not in ans[1]:
                    raise RuntimeError("DoT answer was %r, expected NOERROR %s" % (ans, ADDR))
                # TLS 1.3: a ticket, if any, has arrived with the answer
                return s.version(), s.cipher()[0], s.session, s.session_reused

    version, cipher, session, _ = one_query(None)
    info = {"tls_version": version, "cipher": cipher}
    if session is None:
        info["resumption"] = "no (no session)"
        return info
    try:
        reused = one_query(session)[3]
    except (OSError, ValueError, RuntimeError) as e:
        info["resumption"] = "unknown (second connection failed: %s)" % e
        return info
    how = "ticket" if session.has_ticket else "session id"
    if reused:
        info["resumption"] = "yes (%s)" % how
    else:
        info["resumption"] = "no" if session.has_ticket else "no (no ticket issued)"
    return info


# --------------------------------------------------------------------------- dnsperf
def parse_dnsperf(out):
    main, _, conn = out.partition("Connection Statistics:")
    r = {}
    for key, pat in (("sent", r"Queries sent:\s+(\d+)"), ("completed", r"Queries completed:\s+(\d+)"),
                     ("lost", r"Queries lost:\s+(\d+)")):
        m = re.search(pat, main)
        r[key] = int(m.group(1)) if m else 0
    m = re.search(r"Queries per second:\s+([\d.]+)", main)
    r["qps"] = float(m.group(1)) if m else None
    m = re.search(r"Average Latency \(s\):\s+([\d.]+)", main)
    r["avg_ms"] = float(m.group(1)) * 1000 if m else None
    m = re.search(r"Response codes:\s+(.*)", main)
    r["rcodes"] = {c: int(n) for c, n in re.findall(r"([A-Z]+) (\d+)", m.group(1))} if m else {}
    m = re.search(r"Reconnections:\s+(\d+)", conn)
    r["reconnects"] = int(m.group(1)) if m else None
    m = re.search(r"Average Latency \(s\):\s+([\d.]+)", conn)
    r["connect_ms"] = float(m.group(1)) * 1000 if m else None  # TCP connect + TLS handshake
    if r["qps"] is None or r["sent"] == 0:
        r["error"] = " ".join(out.strip().splitlines()[-3:])[-300:] or "no output"
    return r


def dnsperf_argv(proto, port, qfile, args, clients=None, limit=True):
    argv = ["dnsperf", "-m", proto, "-s", "127.0.0.1", "-p", str(port), "-d", qfile,
            "-c", str(clients or args.clients), "-T", str(args.threads),
            "-q", str(args.outstanding), "-t", str(args.query_timeout)]
    if limit:
        argv += ["-l", str(args.duration)]
    else:
        argv += ["-n", "1"]
    if proto == "doh":
        argv += ["-O", "doh-uri=https://%s%s" % (TLS_NAME, DOH_PATH),
                 "-O", "doh-method=%s" % args.doh_method]
    return argv + shlex.split(args.dnsperf_args)


# --------------------------------------------------------------------------- certificates
def make_certs(d):
    """Test CA and a server certificate (EC P-256, SAN DNS:dns.test, IP:127.0.0.1), openssl CLI."""
    p = {k: os.path.join(d, f) for k, f in (("ca_key", "ca.key"), ("ca", "ca.pem"),
                                             ("key", "server.key"), ("csr", "server.csr"),
                                             ("cert", "server.pem"), ("ext", "server.ext"))}
    with open(p["ext"], "w") as f:
        f.write("basicConstraints = critical, CA:FALSE\n"
                "keyUsage = critical, digitalSignature\n"
                "extendedKeyUsage = serverAuth\n"
                "subjectAltName = DNS:%s, IP:127.0.0.1\n" % TLS_NAME)
    steps = [
        ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-out", p["ca_key"]],
        ["openssl", "req", "-x509", "-new", "-key", p["ca_key"], "-sha256", "-days", "7",
         "-subj", "/CN=dnsmoat bench test CA", "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-out", p["ca"]],
        ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-out", p["key"]],
        ["openssl", "req", "-new", "-key", p["key"], "-subj", "/CN=" + TLS_NAME, "-out", p["csr"]],
        ["openssl", "x509", "-req", "-in", p["csr"], "-CA", p["ca"], "-CAkey", p["ca_key"],
         "-CAcreateserial", "-days", "7", "-sha256", "-extfile", p["ext"], "-out", p["cert"]],
    ]
    for argv in steps:
        rc, out = run_bounded(argv, 30, cwd=d)
        if rc != 0:
            raise RuntimeError("%s failed: %s" % (shlex.join(argv), out.strip()[-300:]))
    return p


# --------------------------------------------------------------------------- servers
class Server:
    def __init__(self, name):
        self.name = name
        self.exe = None
        self.version = ""
        self.argv = None
        self.config = None
        self.ports = {}          # plain, dot, doh
        self.protos = {}         # proto -> "ok" or why it is not measured
        self.tls = {}            # dot_probe() result
        self.proc = None
        self.skip = None         # reason the whole server is skipped
        self.features = {"dot": True, "doh": True}
        self.check = None        # config checker argv (dry run)


def toml_str(s):
    return json.dumps(s)  # a TOML basic string for these plain paths and addresses


def cfg_dnsmoat(s, d, certs, dead_port, clients):
    lines = [
        "# generated by bench/encrypted_peers.py",
        "[server]",
        "listen = [%s]" % toml_str("127.0.0.1:%d" % s.ports["plain"]),
        "dot = [%s]" % toml_str("127.0.0.1:%d" % s.ports["dot"]),
        "doh = [%s]" % toml_str("127.0.0.1:%d" % s.ports["doh"]),
        "doh_path = %s" % toml_str(DOH_PATH),
        "tls_certificate = %s" % toml_str(certs["cert"]),
        "tls_private_key = %s" % toml_str(certs["key"]),
        'control_socket = ""',
        "",
        "[upstream]",
        "# nothing listens here: every answer in this benchmark is local",
        "servers = [%s]" % toml_str("127.0.0.1:%d" % dead_port),
        "",
        "[local]",
        'ttl = "5m"',  # = TTL
        "",
        "[local.records]",
        "%s = %s" % (toml_str(NAME), toml_str("A " + ADDR)),
        "",
        "[lists]",
        "state_dir = %s" % toml_str(os.path.join(d, "lists")),
        "",
        "[querylog]",
        "enabled = false",
        "",
        "[api]",
        "enabled = false",
    ]
    if clients + 16 > 256:
        lines += ["", "[tcp]", "max_connections = %d" % min(65535, clients + 16)]
    s.config = os.path.join(d, "dnsmoat.toml")
    with open(s.config, "w") as f:
        f.write("\n".join(lines) + "\n")
    s.protos = {"dot": "ok", "doh": "ok"}
    s.argv = [s.exe, "run", "--config", s.config]
    s.check = [s.exe, "check-config", s.config]


def cfg_unbound(s, d, certs, clients, doh_ok):
    p = s.ports
    ifaces = [p["plain"], p["dot"]] + ([p["doh"]] if doh_ok else [])
    lines = [
        "# generated by bench/encrypted_peers.py",
        "server:",
        "    port: %d" % p["plain"],
    ] + ["    interface: 127.0.0.1@%d" % port for port in ifaces] + [
        "    tls-port: %d" % p["dot"],
        "    tls-service-pem: \"%s\"" % certs["cert"],
        "    tls-service-key: \"%s\"" % certs["key"],
    ]
    if doh_ok:
        lines += ["    https-port: %d" % p["doh"],
                  "    http-endpoint: \"%s\"" % DOH_PATH,
                  "    http-notls-downstream: no"]
    lines += [
        "    do-ip6: no",
        "    do-daemonize: no",
        "    username: \"\"",
        "    chroot: \"\"",
        "    directory: \"%s\"" % d,
        "    pidfile: \"\"",
        "    use-syslog: no",
        "    logfile: \"\"",
        "    verbosity: 1",
        "    num-threads: 1",
        "    so-reuseport: no",
        "    incoming-num-tcp: %d" % max(100, clients + 16),
        "    module-config: \"iterator\"",
        "    outgoing-interface: 127.0.0.1",
        "    access-control: 127.0.0.0/8 allow",
        "    # everything but the benchmark name is refused: unbound never recurses",
        "    local-zone: \".\" refuse",
        "    local-zone: \"%s.\" static" % NAME,
        "    local-data: \"%s. %d IN A %s\"" % (NAME, TTL, ADDR),
        "remote-control:",
        "    control-enable: no",
    ]
    s.config = os.path.join(d, "unbound.conf")
    with open(s.config, "w") as f:
        f.write("\n".join(lines) + "\n")
    s.protos = {"dot": "ok", "doh": "ok" if doh_ok else
                "not measured: this unbound was built without nghttp2 (no https-port)"}
    s.argv = [s.exe, "-d", "-p", "-c", s.config]
    checker = find_exe("unbound-checkconf")
    s.check = [checker, s.config] if checker else None


def cfg_dnsdist(s, d, certs, dot_ok, doh_ok):
    p = s.ports
    lines = [
        "-- generated by bench/encrypted_peers.py",
        "setSecurityPollSuffix(\"\")  -- no security polling (it would use the system resolver)",
        "setLocal(\"127.0.0.1:%d\")" % p["plain"],
    ]
    if dot_ok:
        lines.append("addTLSLocal(\"127.0.0.1:%d\", \"%s\", \"%s\")" % (p["dot"], certs["cert"], certs["key"]))
    if doh_ok:
        lines.append("addDOHLocal(\"127.0.0.1:%d\", \"%s\", \"%s\", \"%s\")" % (
            p["doh"], certs["cert"], certs["key"], DOH_PATH))
    lines += [
        "-- answered here, no backend: there is no newServer() at all",
        "addAction(QNameRule(\"%s.\"), SpoofAction(\"%s\"))" % (NAME, ADDR),
        "addAction(AllRule(), RCodeAction(DNSRCode.REFUSED))",
    ]
    s.config = os.path.join(d, "dnsdist.conf")
    with open(s.config, "w") as f:
        f.write("\n".join(lines) + "\n")
    s.protos = {"dot": "ok" if dot_ok else "not measured: this dnsdist has no DNS over TLS",
                "doh": "ok" if doh_ok else "not measured: this dnsdist has no DNS over HTTPS"}
    s.argv = [s.exe, "--supervised", "--disable-syslog", "-C", s.config]
    s.check = [s.exe, "--check-config", "-C", s.config]


def detect(name, args):
    """A Server with its executable and version, or with .skip set."""
    s = Server(name)
    if name == "dnsmoat":
        b = args.binary
        if not os.path.isabs(b) and not os.path.exists(b):
            b = os.path.join(ROOT, b)
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            s.skip = ("no executable at %s; build it with `cmake --preset release && cmake --build "
                      "--preset release --target dnsmoat` or pass --binary PATH" % b)
            return s
        s.exe = os.path.abspath(b)
        rc, out = run_bounded([s.exe, "--version"], 10)
        s.version = out.strip().splitlines()[0] if out.strip() else "?"
        return s
    s.exe = find_exe(name)
    if not s.exe:
        s.skip = "not installed; install with `%s`" % INSTALL_HINT
        return s
    if name == "unbound":
        rc, out = run_bounded([s.exe, "-V"], 10)
        m = re.search(r"Version\s+(\S+)", out)
        s.version = "unbound " + (m.group(1) if m else "?")
        s.features = {"dot": True, "doh": "nghttp2" in out}
    else:
        rc, out = run_bounded([s.exe, "--version"], 10)
        s.version = out.strip().splitlines()[0] if out.strip() else "dnsdist ?"
        low = out.lower()
        s.features = {"dot": "dns-over-tls" in low, "doh": "dns-over-https" in low}
    return s


def configure(s, d, certs, dead_port, args):
    os.makedirs(d, exist_ok=True)
    if s.name == "dnsmoat":
        cfg_dnsmoat(s, d, certs, dead_port, args.clients)
    elif s.name == "unbound":
        cfg_unbound(s, d, certs, args.clients, s.features["doh"])
    else:
        cfg_dnsdist(s, d, certs, s.features["dot"], s.features["doh"])


def wait_ready(s, timeout):
    """Plain UDP answer with the benchmark record, then the TLS ports accepting."""
    deadline = time.monotonic() + timeout
    while True:
        if s.proc.poll() is not None:
            raise RuntimeError("exited during startup (rc=%s)" % s.proc.returncode)
        ans = udp_probe(s.ports["plain"])
        if ans is not None:
            if ans[0] != 0 or ADDR not in ans[1]:
                raise RuntimeError("answers %s A with %r, expected NOERROR %s" % (NAME, ans, ADDR))
            break
        if time.monotonic() > deadline:
            raise RuntimeError("no answer on 127.0.0.1:%d within %d s" % (s.ports["plain"], timeout))
        time.sleep(0.05)
    for proto in PROTOS:
        if s.protos[proto] != "ok":
            continue
        while not tcp_open(s.ports[proto]):
            if s.proc.poll() is not None:
                raise RuntimeError("exited during startup (rc=%s)" % s.proc.returncode)
            if time.monotonic() > deadline:
                s.protos[proto] = "not measured: nothing accepts on its port after %d s" % timeout
                break
            time.sleep(0.05)


def probe_protocols(s, certs, probe_file, args):
    """Marks each protocol usable only when a real query over it is answered."""
    if s.protos.get("dot") == "ok":
        try:
            s.tls = dot_probe(s.ports["dot"], certs["ca"])
        except (OSError, RuntimeError, ssl.SSLError) as e:
            s.protos["dot"] = "not measured: DoT probe failed: %s" % e
    for proto in PROTOS:
        if s.protos.get(proto) != "ok":
            continue
        rc, out = run_bounded(dnsperf_argv(proto, s.ports[proto], probe_file, args, clients=1,
                                           limit=False), 30)
        r = parse_dnsperf(out)
        if rc != 0 or r["completed"] != 1 or r["rcodes"].get("NOERROR") != 1:
            s.protos[proto] = "not measured: one dnsperf query got %s" % (
                r.get("error") or r["rcodes"] or "no answer")


# --------------------------------------------------------------------------- report helpers
def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        ncpu = len(os.sched_getaffinity(0))  # what nproc prints
    except AttributeError:
        ncpu = os.cpu_count()
    return {"nproc": ncpu, "model": model, "kernel": os.uname().release}


def git_commit():
    rc, out = run_bounded(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], 10)
    if rc != 0:
        return None
    commit = out.strip()
    rc, out = run_bounded(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"], 10)
    return commit + (" with local changes" if rc == 0 and out.strip() else "")


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def fmt(v, nd=1, comma=False):
    if v is None:
        return "-"
    if comma:
        return "{:,.{}f}".format(v, nd)
    return "%.*f" % (nd, v)


# --------------------------------------------------------------------------- main
def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=DEFAULT_BINARY,
                    help="dnsmoat executable (default %(default)s, relative to the repository "
                         "when not found from the current directory)")
    ap.add_argument("--duration", type=int, default=10, help="seconds per dnsperf run (default 10)")
    ap.add_argument("--clients", type=int, default=4,
                    help="dnsperf -c: TLS connections, open for the whole run (default 4)")
    ap.add_argument("--outstanding", type=int, default=100,
                    help="dnsperf -q: queries in flight (for DoH also the HTTP/2 streams) (default 100)")
    ap.add_argument("--threads", type=int, default=1, help="dnsperf -T (default 1)")
    ap.add_argument("--reps", type=int, default=3,
                    help="interleaved repetitions, the order rotating each time (default 3)")
    ap.add_argument("--only", default=",".join(SERVERS),
                    help="comma list of servers to run (default %(default)s)")
    ap.add_argument("--protocols", default=",".join(PROTOS), help="comma list (default %(default)s)")
    ap.add_argument("--doh-method", default="POST", choices=("POST", "GET"),
                    help="dnsperf -O doh-method (default POST)")
    ap.add_argument("--query-timeout", type=int, default=2, help="dnsperf -t seconds (default 2)")
    ap.add_argument("--dnsperf-args", default="", help="extra dnsperf arguments, e.g. '-e'")
    ap.add_argument("--startup-timeout", type=int, default=30, help="seconds a server has to answer")
    ap.add_argument("--lock", default=os.path.join(tempfile.gettempdir(), "ceo-bench.lock"),
                    help="flock held during timed phases, '' for none (default %(default)s)")
    ap.add_argument("--lock-wait", type=int, default=600, help="most seconds to wait for the lock")
    ap.add_argument("--max-seconds", type=int, default=0,
                    help="watchdog for the whole run; 0 = computed from reps and duration")
    ap.add_argument("--json", default="", metavar="OUT", help="write the raw results here")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (configs, logs)")
    ap.add_argument("--dry-run", action="store_true",
                    help="write certificates and configs, check them with the servers' own "
                         "checkers, print the plan; start no server and no load")
    args = ap.parse_args()
    args.only = [x.strip() for x in args.only.split(",") if x.strip()]
    args.protocols = [x.strip() for x in args.protocols.split(",") if x.strip()]
    for x in args.only:
        if x not in SERVERS:
            ap.error("--only: unknown server %r (known: %s)" % (x, ", ".join(SERVERS)))
    for x in args.protocols:
        if x not in PROTOS:
            ap.error("--protocols: unknown protocol %r (known: %s)" % (x, ", ".join(PROTOS)))
    for k in ("duration", "clients", "outstanding", "threads", "reps", "query_timeout"):
        if getattr(args, k) < 1:
            ap.error("--%s must be at least 1" % k.replace("_", "-"))
    return args


def load_desc(args):
    """dnsperf's load arguments as the report prints them."""
    a = "-m dot|doh -c %d -T %d -q %d -t %d -l %d" % (args.clients, args.threads, args.outstanding,
                                                     args.query_timeout, args.duration)
    if args.dnsperf_args:
        a += " " + args.dnsperf_args
    return "dnsperf %s` (DoH: `-O doh-uri=https://%s%s -O doh-method=%s`)" % (a, TLS_NAME, DOH_PATH,
                                                                          args.doh_method)


def report(args, cmdline, servers, runs, info):
    protos = args.protocols
    live = [s for s in servers if not s.skip]

    def cells(name, proto, key):
        return [r.get(key) for r in runs
                if r["server"] == name and r["proto"] == proto and "error" not in r]

    out = []
    out.append("## DNS over TLS and DNS over HTTPS beside unbound and dnsdist\n")
    out.append("```sh\n%s\n```\n" % cmdline)
    m = info["machine"]
    out.append("%s, %d CPUs (nproc), %s, Linux %s; %s; `%s; dnsperf %s; dnsmoat at commit %s. "
               "Medians of %d interleaved repetitions of %d s per cell." % (
                   info["date"], m["nproc"], m["model"], m["kernel"],
                   ", ".join(s.version for s in live), load_desc(args), info["dnsperf"],
                   info["commit"] or "?", args.reps, args.duration))
    out.append("")
    out.append("| server | protocol | qps | vs dnsmoat | avg latency (ms) | server CPU µs/query | lost | reconnects |")
    out.append("|---|---|---|---|---|---|---|---|")
    base = {p: med(cells("dnsmoat", p, "qps")) for p in protos}
    for s in live:
        for p in protos:
            if s.protos.get(p) != "ok":
                out.append("| %s | %s | %s | | | | | |" % (s.name, p, s.protos.get(p, "not measured")))
                continue
            q = med(cells(s.name, p, "qps"))
            if q is None:
                errs = [r.get("error") for r in runs if r["server"] == s.name and r["proto"] == p]
                out.append("| %s | %s | failed: %s | | | | | |" % (s.name, p, (errs or ["?"])[-1]))
                continue
            ratio = "x%.2f" % (q / base[p]) if base.get(p) else ""
            rec = [v for v in cells(s.name, p, "reconnects") if v is not None]
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                ("**%s**" % s.name) if s.name == "dnsmoat" else s.name, p, fmt(q, 0, comma=True),
                ratio, fmt(med(cells(s.name, p, "avg_ms")), 3),
                fmt(med(cells(s.name, p, "cpu_us_per_q")), 1), fmt(med(cells(s.name, p, "lost")), 0),
                max(rec) if rec else "-"))
    out.append("")
    out.append("| server | TLS negotiated (DoT probe) | TLS session resumed on a new connection "
               "| dnsperf connect + handshake, ms (%s) |" % " / ".join(protos))
    out.append("|---|---|---|---|")
    for s in live:
        t = s.tls
        out.append("| %s | %s | %s | %s |" % (
            s.name, ("%s %s" % (t["tls_version"], t["cipher"])) if t else "-",
            t.get("resumption", "-") if t else "-",
            " / ".join(fmt(med(cells(s.name, p, "connect_ms")), 3) for p in protos)))
    out.append("")
    out.append(
        "Every server answers `%s A` with `%s` from its own local data (dnsmoat `[local.records]`, "
        "unbound `local-data`, dnsdist `SpoofAction`), so no upstream is involved, and all use the same "
        "EC P-256 certificate. Each of the %d dnsperf connections does one TLS handshake when a run "
        "starts and then carries every query of the run (DoT pipelined, DoH as HTTP/2 %s streams), so "
        "the figures are queries on established TLS sessions; reconnects is the most any run needed. "
        "unbound runs `num-threads: 1`, dnsmoat serves from one event-loop thread, dnsdist runs with "
        "its default threads. On a machine with few cores dnsperf, which encrypts too, competes with "
        "the server for CPU: compare the ratios and CPU per query of one run, not absolute qps across "
        "machines." % (NAME, ADDR, args.clients, args.doh_method))
    notes = []
    for s in servers:
        if s.skip:
            notes.append("- %s skipped: %s." % (s.name, s.skip))
    errs = [r for r in runs if "error" in r]
    if errs:
        notes.append("- %d runs failed and are left out of the medians: %s." % (len(errs), "; ".join(
            "%s %s rep %d: %s" % (r["server"], r["proto"], r["rep"], r["error"]) for r in errs[:6])))
    bad = [r for r in runs if "error" not in r and set(r["rcodes"]) - {"NOERROR"}]
    if bad:
        notes.append("- %d runs got answers other than NOERROR: %s." % (len(bad), "; ".join(
            "%s %s rep %d: %s of %d" % (r["server"], r["proto"], r["rep"], ", ".join(
                "%s %d" % (c, n) for c, n in sorted(r["rcodes"].items()) if c != "NOERROR"),
                r["completed"]) for r in bad[:6])))
    if notes:
        out.append("")
        out.extend(notes)
    return "\n".join(out)


def on_signal(signum, frame):
    # unwinds through every try/finally, which end our processes
    raise SystemExit("stopped by %s" % signal.Signals(signum).name)


def main():
    args = parse_args()
    script = os.path.abspath(sys.argv[0])
    if script.startswith(ROOT + os.sep):
        script = os.path.relpath(script, ROOT)
    else:
        script = sys.argv[0]
    cmdline = shlex.join([script] + sys.argv[1:])
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM):
        signal.signal(sig, on_signal)
    nserv = len(args.only)
    max_seconds = args.max_seconds or (300 + nserv * (args.startup_timeout + 70)
                                       + args.reps * nserv * len(args.protocols) * (args.duration + 45))
    if not args.dry_run:
        signal.alarm(max_seconds)

    for tool, pkg in (("dnsperf", "dnsperf"), ("openssl", "openssl")):
        if not find_exe(tool):
            log("%s is missing: sudo apt-get install %s" % (tool, pkg))
            return 2
    rc, out = run_bounded(["dnsperf", "-h"], 10)
    m = re.search(r"Version\s+(\S+)", out)
    dnsperf_version = m.group(1) if m else "?"
    if not re.search(r"\bdot\b", out) or not re.search(r"\bdoh\b", out):
        log("this dnsperf (%s) has no -m dot/doh; 2.10 or later is needed" % dnsperf_version)
        return 2

    servers = [detect(n, args) for n in args.only]
    for s in servers:
        if s.skip:
            log("%s: skipped, %s" % (s.name, s.skip))
        else:
            log("%s: %s (%s)" % (s.name, s.version, s.exe))
    live = [s for s in servers if not s.skip]
    shown = [s for s in servers if not s.skip or (args.dry_run and s.name == "dnsmoat")]
    if args.dry_run:  # show dnsmoat's config even without a binary to check it with
        for s in shown:
            s.exe = s.exe or args.binary
    if not shown and not live:
        log("nothing to measure")
        return 2

    work = tempfile.mkdtemp(prefix="moat-encrypted-")
    keep = args.keep
    logdir = os.path.join(work, "logs")
    os.makedirs(logdir)
    runs = []
    failed = False
    try:
        certs = make_certs(work)
        qfile = os.path.join(work, "bench.txt")
        with open(qfile, "w") as f:
            f.write(("%s A\n" % NAME) * 10000)  # dnsperf loops the file; big enough to rewind rarely
        probe_file = os.path.join(work, "probe.txt")
        with open(probe_file, "w") as f:
            f.write("%s A\n" % NAME)
        ports = free_ports(3 * len(shown) + 1)
        dead_port = ports.pop()  # dnsmoat's upstream: nothing listens there
        for i, s in enumerate(shown):
            s.ports = dict(zip(("plain", "dot", "doh"), ports[3 * i:3 * i + 3]))
            configure(s, os.path.join(work, s.name), certs, dead_port, args)
            for p in PROTOS:
                if p not in args.protocols:
                    s.protos[p] = "not requested"

        if args.dry_run:
            print("Dry run: nothing started. Work directory: %s" % work)
            print("Certificates: CA %s, server %s / %s (EC P-256, SAN DNS:%s, IP:127.0.0.1)" % (
                certs["ca"], certs["cert"], certs["key"], TLS_NAME))
            for s in servers:
                if s.skip and s not in shown:
                    print("\n## %s: skipped, %s" % (s.name, s.skip))
                    continue
                if s.skip:  # dnsmoat without a binary: its config, for review, unchecked
                    s.check = None
                    print("\n## %s (would be skipped: %s)" % (s.name, s.skip))
                else:
                    print("\n## %s (%s)" % (s.name, s.version))
                print("ports: %s\nstart: %s" % (s.ports, shlex.join(s.argv)))
                for p in PROTOS:
                    if s.protos[p] == "ok":
                        print("load:  %s" % shlex.join(dnsperf_argv(p, s.ports[p], qfile, args)))
                    else:
                        print("%s: %s" % (p, s.protos[p]))
                if s.check:
                    rc, out = run_bounded(s.check, 30)
                    print("check: %s -> %s%s" % (shlex.join(s.check), "ok" if rc == 0 else "FAILED rc=%s" % rc,
                                                 "" if rc == 0 else "\n" + out.strip()))
                    failed |= rc != 0
                print("--- %s\n%s" % (s.config, open(s.config).read().rstrip()))
            print("\nwatchdog for the real run: %d s" % max_seconds)
            return 1 if failed else 0

        # ---- start everything, check each protocol with one real query
        for s in live:
            s.proc = start_daemon(s.name, s.argv, logdir)
        for s in live:
            try:
                wait_ready(s, args.startup_timeout)
                probe_protocols(s, certs, probe_file, args)
            except (RuntimeError, OSError) as e:
                s.skip = "did not start: %s (log: %s)" % (e, os.path.join(logdir, s.name + ".log"))
                log("%s: %s" % (s.name, s.skip))
                failed = True
                kill_group(s.proc, 3)
                continue
            for p in PROTOS:
                log("%s %s on 127.0.0.1:%d: %s" % (s.name, p, s.ports[p], s.protos[p]))
            if s.tls:
                log("%s TLS: %s %s, resumption %s" % (s.name, s.tls["tls_version"], s.tls["cipher"],
                                                       s.tls["resumption"]))
        live = [s for s in live if not s.skip]

        # ---- the load, interleaved: per repetition and protocol every server back to back
        for rep in range(args.reps):
            for pi, proto in enumerate(args.protocols):
                order = [s for s in live if s.protos.get(proto) == "ok"]
                if not order:
                    continue
                k = (rep + pi) % len(order)
                order = order[k:] + order[:k]
                with Lock(args.lock, args.lock_wait):
                    for s in order:
                        if s.proc.poll() is not None:
                            runs.append({"server": s.name, "proto": proto, "rep": rep,
                                         "error": "server exited (rc=%s)" % s.proc.returncode})
                            failed = True
                            continue
                        argv = dnsperf_argv(proto, s.ports[proto], qfile, args)
                        c0 = cpu_seconds(s.proc.pid)
                        rc, out = run_bounded(argv, args.duration + args.query_timeout + 40)
                        c1 = cpu_seconds(s.proc.pid)
                        r = parse_dnsperf(out)
                        if rc != 0 and "error" not in r:
                            r["error"] = "dnsperf rc=%s" % rc
                        r.update(server=s.name, proto=proto, rep=rep, argv=argv)
                        if c0 is not None and c1 is not None and r["completed"]:
                            r["cpu_s"] = c1 - c0
                            r["cpu_us_per_q"] = (c1 - c0) * 1e6 / r["completed"]
                        runs.append(r)
                        if "error" in r:
                            failed = True
                            log("rep %d %s %-8s FAILED: %s" % (rep, proto, s.name, r["error"]))
                        else:
                            log("rep %d %s %-8s qps %9.0f avg %.3f ms cpu %s us/q lost %d reconnects %s" % (
                                rep, proto, s.name, r["qps"], r["avg_ms"] or 0,
                                fmt(r.get("cpu_us_per_q"), 1), r["lost"], r["reconnects"]))

        info = {"date": time.strftime("%Y-%m-%d"), "machine": machine(), "commit": git_commit(),
                "dnsperf": dnsperf_version, "command": cmdline}
        print(report(args, cmdline, servers, runs, info))
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"info": info, "args": {k: v for k, v in vars(args).items()},
                           "servers": {s.name: {"skip": s.skip, "version": s.version, "exe": s.exe,
                                                "protocols": s.protos, "tls": s.tls, "ports": s.ports}
                                       for s in servers},
                           "runs": runs}, f, indent=1)
            log("raw results in %s" % args.json)
        return 1 if failed or not any("error" not in r for r in runs) else 0
    finally:
        signal.alarm(0)
        cleanup()
        if keep or failed:
            log("configs and logs kept in %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
