// Typed io_uring operations.  One small type per opcode: required arguments in
// the constructor, optional ones as chained setters, and a `code` constant the
// probe can test.  Ring::prepare(op) hands prepare() a zeroed SQE, and
// prepare() writes every field the opcode reads, so nothing stale survives.
//
//     ring.prepare(op::Read(Fd{fd}, buf, 4096, offset)).user_data(&req).link();
//     ring.prepare(op::Write(Fixed{0}, buf, n, offset));   // IOSQE_FIXED_FILE set
//
// Memory an operation points to (buffers, iovecs, paths, timespecs, statx
// results, sockaddrs) must stay valid until that operation's own completion,
// even after a cancel: the kernel may still be using it.
//
// The operations live by domain, each header usable on its own: rw.hpp
// (read, write and their vectored, registered-buffer and provided-buffer
// forms, splice, tee), fs.hpp (open, close, pipe, stat, sync, directory
// entries, xattrs), net.hpp (sockets), control.hpp (nop, timeouts, cancel,
// poll, epoll_wait, msg_ring), sync.hpp (futexes, waitid) and passthrough.hpp
// (URING_CMD: socket commands, NVMe commands for a BigRing).  This header
// includes them all.
#pragma once

#include "uringkit/cxx20.hpp"
#include "uringkit/ops/control.hpp"
#include "uringkit/ops/fs.hpp"
#include "uringkit/ops/net.hpp"
#include "uringkit/ops/passthrough.hpp"
#include "uringkit/ops/rw.hpp"
#include "uringkit/ops/sync.hpp"
