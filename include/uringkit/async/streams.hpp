// Multishot operations as streams: one SQE, many completions, delivered in
// order to one consumer.  A stream may be destroyed at any time (armed or
// not, with or without stop()): its destructor hands the operation to the
// loop, which cancels it and drops its remaining completions, returning their
// provided buffers and closing the sockets they accepted.
//
// One header per stream: recv_stream.hpp (RecvStream), send_stream.hpp
// (SendStream) and accept_stream.hpp (AcceptStream); this one includes them all.
#pragma once

#include "uringkit/async/accept_stream.hpp"
#include "uringkit/async/recv_stream.hpp"
#include "uringkit/async/send_stream.hpp"
#include "uringkit/cxx20.hpp"
