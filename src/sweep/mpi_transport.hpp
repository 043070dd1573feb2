// Private, built only with MPI (TWOCS_HAVE_MPI): a sweep spread over the ranks of an MPI job.
// Rank 0 coordinates: it owns the CSV (LocalTransport), hands out the unfinished scenarios one
// at a time to ranks that ask (so uneven scenarios balance), appends the rows they send back,
// and runs scenarios itself too. Every rank runs its scenarios through the same loop and pool
// as the serial sweep (sweep_loop.hpp), so rows are the serial sweep's, byte for byte.
//
// Messages (MPI_COMM_WORLD): worker -> 0: request (a free slot), result (an encoded finished
// scenario), stopped (this rank stopped, or failed; no more rows from it). 0 -> worker: assign (an index),
// done (nothing left), stop (interrupted: stop and answer `stopped`), abort (rank 0 failed, and
// says why: stop, answer `stopped`, and leave as the peer of a failed rank, exit code 2).
#pragma once

#include <twocs/sweep/sweep.hpp>

#include "local_transport.hpp"
#include "sweep_loop.hpp"

namespace twocs::sweep::detail {

/// Rank 0 of an MPI job; returns true when interrupted (every rank stopped, rows dropped).
bool run_mpi_coordinator(const config::Study& study, const SweepOptions& options, LocalTransport& own, StopCheck stop);

/// Any other rank; counts what it ran in `totals`; returns true when interrupted.
bool run_mpi_worker(const config::Study& study, const SweepOptions& options, SweepTotals& totals, StopCheck stop);

/// A finished scenario as one message and back (length-prefixed fields, any bytes allowed).
[[nodiscard]] std::string encode(const FinishedScenario& scenario);
[[nodiscard]] FinishedScenario decode(const std::string& message);

} // namespace twocs::sweep::detail
