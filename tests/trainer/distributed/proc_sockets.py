"""What the kernel says of a process, from its own tables (Linux only): which TCP ports it listens on
(/proc/<pid>/fd and /proc/net/tcp{,6}: the oracle of the one-port tests), and its memory and threads
(/proc/<pid>/status: the oracle of the abuse tests)."""
import os


def listening_tcp_ports(pid):
    """TCP ports in LISTEN state whose sockets the process `pid` holds."""
    inodes = set()
    fd_dir = f"/proc/{pid}/fd"
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        with open(table) as f:
            next(f)
            for row in f:
                cols = row.split()
                if cols[3] == "0A" and cols[9] in inodes:  # 0A: TCP_LISTEN
                    ports.add(int(cols[1].rsplit(":", 1)[1], 16))
    return ports


def proc_status(pid) -> dict:
    """VmHWM and VmRSS in bytes, and Threads, of process `pid`."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS", "Threads"):
                out[key] = int(value.split()[0]) * (1024 if key != "Threads" else 1)
    return out
