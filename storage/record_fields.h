// The fields of the stored rows, listed once each, as storage/step_record.h lists the step's:
// X(type, name, default) in column order. The row structs (records.h), their SQL column lists,
// readers and writers (store_rows.h) and the telemetry bridge (launch/run_recorder.cpp,
// app/worker) are made from them; a test checks each list against its table and its message
// in comm/telemetry/telemetry.proto. A row fed by telemetry starts with run_id and rank and
// ends with time_ns (when it was sent, ns since the rank's start, as a step's); between
// them are the message's own fields, under the message's names.
#pragma once

// An evaluation (telemetry Eval).
#define RANKLAB_EVAL_FIELDS(X)                                    \
  X(int64_t, step, 0)                                             \
  X(int, epoch, 0)                                                \
  X(double, test_loss, 0) /* over the whole test set; NaN kept */ \
  X(double, test_accuracy, 0)

// Something that happened (telemetry Event).
#define RANKLAB_EVENT_FIELDS(X)                                                              \
  X(int64_t, step, 0)                                                                        \
  X(std::string, kind, {}) /* checkpoint | fault | overflow | straggler | log | error ... */ \
  X(std::string, text, {})

// A parameter server shard's load over one interval (telemetry ServerLoad).
#define RANKLAB_SERVER_LOAD_FIELDS(X)                    \
  X(int, shard, 0)                                       \
  X(int64_t, key_begin, 0)                               \
  X(int64_t, key_end, 0)                                 \
  X(int64_t, interval_ns, 0)                             \
  X(int64_t, pushes, 0)                                  \
  X(int64_t, pulls, 0)                                   \
  X(int64_t, bytes_rx, 0)                                \
  X(int64_t, bytes_tx, 0)                                \
  X(int64_t, busy_ns, 0) /* applying updates */          \
  X(int64_t, idle_ns, 0) /* waiting for a request */     \
  X(int64_t, held_ns, 0) /* replies held back, summed */ \
  X(int64_t, max_staleness, 0)                           \
  X(int64_t, version, 0)                                 \
  X(int64_t, bytes_raw, 0) /* bytes_tx uncompressed (0 in files before schema 4: = bytes_tx) */

// A rank of a run, after run_id and rank (no one message: Hello gives host and pid, Bye the
// exit, the recorder the sequence counts).
#define RANKLAB_RANK_FIELDS(X)                                                       \
  X(std::string, host, {})                                                           \
  X(int64_t, pid, 0)                                                                 \
  X(std::string, status, {}) /* running | done | failed */                           \
  X(int, exit_status, 0)                                                             \
  X(int64_t, train_ns, 0)  /* this rank's training-loop time, evaluation excluded */ \
  X(int64_t, seq_gaps, 0)  /* telemetry messages lost in transit (sequence holes) */ \
  X(int64_t, last_seq, -1) /* highest sequence number seen */

// A span: time a rank spent outside its steps, a pipeline pass, or a piece of a sampled
// step, after run_id and rank. Four places: X(type, member, column, default), as its kind is
// stored in the column `phase` (the wire's name, and docs/schema.md's).
#define RANKLAB_SPAN_FIELDS(X)                                                                    \
  X(int64_t, step, step, 0)         /* the last step before it; a pass's or a piece's own step */ \
  X(std::string, kind, phase, {})   /* evaluate | checkpoint | F<n> | B<n> | ring-rs | ring-ag |  \
                                       bucket | ps-push | ps-reply | dev-input | dev-fwd |        \
                                       dev-bwd | dev-loss | dev-update */                         \
  X(int64_t, start_ns, start_ns, 0) /* ns since the rank's start, as a step's time_ns */          \
  X(int64_t, end_ns, end_ns, 0)                                                                   \
  X(int, part, part, -1)   /* a piece's index: the ring hop's, the bucket's; a device piece's     \
                              layer (dev-fwd, dev-bwd); -1: none */                               \
  X(int, peer, peer, -1)   /* the rank it sent to */                                              \
  X(int, chunk, chunk, -1) /* the ring chunk it sent */                                           \
  X(int64_t, bytes, bytes, 0)

// What the launcher knows about a run before any rank starts (NewRun; createRun stores it).
#define RANKLAB_NEW_RUN_FIELDS(X)                                                       \
  X(std::string, name, {})                                                              \
  X(std::string, job_path, {}) /* file the job came from ("" when built in memory) */   \
  X(std::string, job_toml, {}) /* the resolved job, exactly as the ranks received it */ \
  X(int, world, 1)                                                                      \
  X(std::string, strategy, {})                                                          \
  X(std::string, algorithm, {})                                                         \
  X(std::string, codec, {})                                                             \
  X(std::string, amp, {})                                                               \
  X(int, epochs, 0)                                                                     \
  X(std::string, origin, "ranklab") /* storage/run_origin.h names each value */

// What a stored run adds to its NewRun (RunRow; the runs table's launcher_* columns, which
// tell a lost run from a running one, are read apart).
#define RANKLAB_RUN_FIELDS(X)                                                                   \
  X(int64_t, id, 0)                                                                             \
  X(std::string, created, {})  /* ISO-8601 UTC */                                               \
  X(std::string, finished, {}) /* ISO-8601 UTC, "" while running (NULL in the table) */         \
  X(std::string, status, {})   /* running | done | failed | stopped */                          \
  X(double, wall_s, 0)         /* whole run, launch to last rank's exit */                      \
  X(double, train_s, 0) /* training loop only (slowest rank; launch and evaluation excluded) */ \
  X(std::string, scheduler_job, {})    /* the batch scheduler's job id (Slurm); "" local */     \
  X(std::string, scheduler_state, {})  /* its state: PENDING, RUNNING, COMPLETED, ... */        \
  X(std::string, scheduler_reason, {}) /* why it waits (Resources, Priority) */                 \
  X(std::string, nodes, {})            /* the nodes it got, as the scheduler writes them */     \
  X(std::string, scheduler_exit, {})   /* "exit:signal", once the job ended */

// A step bin: consecutive steps of one rank summed, after run_id and rank and before each
// phase's sum (storage/step_record.h's phases, SUM(<phase>_ns)): X(type, name, the SQL that
// sums the bin's steps into it, default). `finite` is a step's loss where it is finite.
#define RANKLAB_STEP_BIN_FIELDS(X)                                                       \
  X(int64_t, first_step, "MIN(step)", 0)                                                 \
  X(int64_t, last_step, "MAX(step)", 0)                                                  \
  X(int64_t, steps, "COUNT(*)", 0) /* rows in the bin */                                 \
  X(int, epoch, "MAX(epoch)", 0)   /* of the last step */                                \
  X(int64_t, samples, "SUM(samples)", 0)                                                 \
  X(double, loss_sum, "TOTAL(finite)", 0)    /* finite losses only */                    \
  X(int64_t, loss_count, "COUNT(finite)", 0) /* 0: loss_min and loss_max mean nothing */ \
  X(double, loss_min, "MIN(finite)", 0)      /* NULL in the table without one: 0 */      \
  X(double, loss_max, "MAX(finite)", 0)                                                  \
  X(int64_t, bytes_tx, "SUM(bytes_tx)", 0)                                               \
  X(int64_t, bytes_rx, "SUM(bytes_rx)", 0)                                               \
  X(int64_t, bytes_raw, "SUM(bytes_raw)", 0) /* bytes_tx uncompressed */                 \
  X(double, loss_scale_min, "MIN(loss_scale)", 1)                                        \
  X(double, loss_scale_max, "MAX(loss_scale)", 1)                                        \
  X(int64_t, staleness_sum, "SUM(staleness)", 0)                                         \
  X(double, grad_norm_sum, "TOTAL(grad_norm)", 0)                                        \
  X(double, lr_sum, "TOTAL(lr)", 0)                                                      \
  X(int64_t, first_time_ns, "MIN(time_ns)", 0)                                           \
  X(int64_t, last_time_ns, "MAX(time_ns)", 0)

// A member of a row struct.
#define RANKLAB_ROW_MEMBER(type, name, init) type name = init;
// One column for visitColumns().
#define RANKLAB_VISIT_COLUMN(type, name, init) visit(#name, row.name);
// The same for a list that names its columns: X(type, member, column, default).
#define RANKLAB_ROW_MEMBER_AS(type, name, column, init) type name = init;
#define RANKLAB_VISIT_COLUMN_AS(type, name, column, init) visit(#column, row.name);
// A row's fields from the telemetry message `message` of the same names.
#define RANKLAB_FIELD_FROM_MESSAGE(type, name, init) row.name = message.name();
// A telemetry message's fields from `from`'s of the same names.
#define RANKLAB_FIELD_TO_MESSAGE(type, name, init) message.set_##name(from.name);

// visitColumns(row, visit) for the row struct Row: visit(column name, member) for each of its
// columns in order, run_id and rank first, then FIELDS (each through VISIT), then `tail`
// (time_ns, or nothing).
#define RANKLAB_ROW_VISITOR_WITH(Row, FIELDS, VISIT, tail) \
  template <typename R, typename Visit>                    \
  requires std::is_same_v<std::remove_const_t<R>, Row>     \
  void visitColumns(R& row, Visit&& visit) {               \
    visit("run_id", row.run_id);                           \
    visit("rank", row.rank);                               \
    FIELDS(VISIT)                                          \
    tail                                                   \
  }
#define RANKLAB_ROW_VISITOR(Row, FIELDS, tail) \
  RANKLAB_ROW_VISITOR_WITH(Row, FIELDS, RANKLAB_VISIT_COLUMN, tail)
