"""Where a machine's cores go while one client drives a server: every second, the server
process's CPU (cores busy), the client processes' (by command name) and the machine's idle
cores, from /proc, for SECONDS or until interrupted (SIGINT or SIGTERM). Prints the medians
over the seconds in which the server was busy (at least 0.8 cores), which leaves out a
run's start and end, and how many seconds those were.
  python3 bench/cores.py SECONDS SERVER_PID CLIENT_COMMAND"""
import os
import signal
import statistics
import sys
import time

seconds, server, client = float(sys.argv[1]), sys.argv[2], sys.argv[3]
hz = os.sysconf("SC_CLK_TCK")


def cpu(pid):
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / hz
    except (OSError, IndexError):
        return None


def clients():
    total = 0.0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if open(f"/proc/{pid}/comm").read().strip() == client[:15]:
                total += cpu(pid) or 0.0
        except OSError:
            pass
    return total


def idle():
    fields = open("/proc/stat").readline().split()
    return (int(fields[4]) + int(fields[5])) / hz


stopped = False


def stop(*_):
    global stopped
    stopped = True


signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)
samples, before = [], None
start = time.time()
while time.time() - start < seconds and not stopped:
    now = (time.time(), cpu(server), clients(), idle())
    if before and now[1] is not None and before[1] is not None:
        dt = now[0] - before[0]
        rates = [(a - b) / dt for a, b in zip(now[1:], before[1:])]
        # A client that ended within the second takes its CPU time with it.
        if rates[0] >= 0.8 and rates[1] >= 0:
            samples.append(rates)
    before = now
    time.sleep(1)
if samples:
    server_cores, client_cores, idle_cores = (statistics.median(s) for s in zip(*samples))
    print(f"{server_cores:.2f} {client_cores:.2f} {idle_cores:.2f} {len(samples)}")
else:
    print("nan nan nan 0")
