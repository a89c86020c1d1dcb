//! How much memory the server's queries may use: the process's address-space limit
//! (`ulimit -v`), the machine's or cgroup's memory, what the process has mapped already
//! (worker stacks, malloc's arenas), and the pool size a share (`50%`) comes to.

use std::path::PathBuf;

/// The smallest memory pool a share (`50%`) may come to.
pub(super) const MIN_POOL: usize = 16 << 20;

/// Parses a size: bytes, or a number with k, m, g or t (powers of 1024, an optional trailing
/// `b`), or a percentage of `whole`.
pub fn parse_size(v: &str, whole: usize) -> Option<usize> {
    let v = v.trim().to_ascii_lowercase();
    if let Some(p) = v.strip_suffix('%') {
        let p: f64 = p.trim().parse().ok()?;
        if !(0.0..=100.0).contains(&p) {
            return None;
        }
        return Some((whole as f64 * p / 100.0) as usize);
    }
    let v = v.strip_suffix('b').unwrap_or(&v);
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: usize = num.parse().ok()?;
    let shift = match unit.trim() {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return None,
    };
    n.checked_mul(1usize << shift)
}

/// Stack size of the runtime's worker and blocking threads.
pub const WORKER_STACK: usize = 64 << 20;

/// The glibc allocator's reservation of address space for each of its arenas (64 MiB on
/// 64-bit machines), and how many arenas it keeps per core at most (unless MALLOC_ARENA_MAX
/// says otherwise).
pub(super) const MALLOC_ARENA: usize = 64 << 20;

pub(super) const MALLOC_ARENAS_PER_CORE: usize = 8;

/// This process's address-space limit (`ulimit -v`, RLIMIT_AS; the soft limit), if one is
/// set.
pub fn address_space_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max address space"))?;
    // "unlimited" does not parse.
    line.split_whitespace().next()?.parse().ok()
}

/// Blocking threads the runtime may start: tokio's default (512), or under an address-space
/// limit as many as a quarter of it holds at [`WORKER_STACK`] each (at least 4), so that
/// thread stacks cannot take the room queries need.
pub fn max_blocking_threads() -> usize {
    match address_space_limit() {
        None => 512,
        Some(limit) => (limit / 4 / WORKER_STACK).clamp(4, 512),
    }
}

/// The address space this process has mapped now (`VmSize`).
pub(super) fn mapped_now() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmSize:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|kb| kb.parse::<usize>().ok())
        })
        .map(|kb| kb.saturating_mul(1024))
        .unwrap_or(0)
}

/// The memory this process may use: the smallest of the machine's, its cgroup's limit (cgroup
/// v2 `memory.max`, v1 `memory.limit_in_bytes`) and, under an address-space limit
/// (`ulimit -v`), what that limit leaves once the server's own needs are set aside: what it
/// has mapped already (code, libraries, the threads started so far), a stack for every
/// thread the runtime may still start, and the allocator's arenas.
pub fn available_memory() -> usize {
    let limit = machine_or_cgroup_memory();
    match address_space_limit() {
        None => limit,
        Some(space) => {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let blocking = max_blocking_threads();
            // glibc makes an arena only for a thread that finds the others busy: at most one
            // per thread (the workers, the blocking threads, the main thread), and at most
            // its own cap (MALLOC_ARENA_MAX, else 8 per core).
            let arena_cap = std::env::var("MALLOC_ARENA_MAX")
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|n| *n > 0)
                .unwrap_or(cores * MALLOC_ARENAS_PER_CORE);
            let arenas = arena_cap.min(cores + blocking + 1);
            let reserve = mapped_now()
                .saturating_add(blocking.saturating_mul(WORKER_STACK))
                .saturating_add(arenas.saturating_mul(MALLOC_ARENA))
                // Most of it is address space, not memory: whatever the estimate, a quarter
                // of the limit is left to queries.
                .min(space / 4 * 3);
            limit.min(space.saturating_sub(reserve))
        }
    }
}

/// The machine's memory, or its cgroup's limit if lower.
pub(super) fn machine_or_cgroup_memory() -> usize {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<usize>().ok())
        })
        .map(|kb| kb.saturating_mul(1024))
        .unwrap_or(4 << 30);
    let mut limit = total;
    for limit_file in cgroup_limit_files() {
        if let Some(n) = std::fs::read_to_string(&limit_file)
            .ok()
            .and_then(|t| t.trim().parse::<usize>().ok())
        {
            // v1 reports "no limit" as a huge number; "max" (v2) does not parse.
            limit = limit.min(n);
        }
    }
    limit
}

/// The memory-limit files of this process's cgroups (v2 and v1).
pub(super) fn cgroup_limit_files() -> Vec<PathBuf> {
    let Ok(groups) = std::fs::read_to_string("/proc/self/cgroup") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let path = path.trim_start_matches('/');
        if controllers.is_empty() {
            for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
                out.push(PathBuf::from(root).join(path).join("memory.max"));
            }
        } else if controllers.split(',').any(|c| c == "memory") {
            out.push(
                PathBuf::from("/sys/fs/cgroup/memory")
                    .join(path)
                    .join("memory.limit_in_bytes"),
            );
        }
    }
    out
}
