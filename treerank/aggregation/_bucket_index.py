"""Per-bucket mass queries against a fixed consensus bucket order.

Both the local search and the insertion of unseen items need, for a query item x
(given by its bucket in each ranking) and a consensus bucket q, the two
ranking-weighted masses

    better(x, q) = sum_b w_b * mass{j in q : r_b(j) <  r_b(x)},
    atmost(x, q) = sum_b w_b * mass{j in q : r_b(j) <= r_b(x)}.

Everything about moving x relative to bucket q follows from them (see
:mod:`treerank.aggregation._local_search`). They are answered without any
pairwise item matrix:

- a *small* bucket (at most ``small_max`` items) is compared member by member,
  one (B,) row comparison per member;
- a *large* bucket gets, for each ranking b, a row of prefix masses over the
  K_b buckets of r_b, so that a query is one table look-up per ranking.

With K_b buckets per ranking a query costs O(B * min(|q|, small_max)); the
tables take O(n_large * K_b) per ranking, are built one ranking at a time (a
table of a few hundred kB stays in cache while all queries read it) and kept
when they all fit in a memory budget. Masses are summed in int64 when the item
weights are integers (exact, and prefix sums of integers vectorize).

Three query shapes: :meth:`_BucketIndex.sums` (any list of (query, bucket)
pairs), :meth:`_BucketIndex.window_sums` (items of the data against the buckets
around their own, laid out as a grid so that each ranking's look-ups are one
vectorized gather) and :meth:`_BucketIndex.range_sums` (queries against runs of
consecutive buckets, whose small-bucket members form one contiguous block
compared by broadcasting).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = []

_SMALL_MAX = 8
_PAIR_CHUNK = 1 << 22  # compared bytes per chunk of member rows
_TABLE_BUDGET = 1 << 24  # float64 table entries kept at once (128 MB)


class _BucketIndex:
    """Consensus buckets of the items of ``data``, ready for per-bucket queries.

    Parameters
    ----------
    data : _RankingData
    consensus : ndarray of shape (M,)
        Dense bucket indices 0..Q-1.
    small_max : int
        Buckets with at most this many items are compared member by member.
    """

    def __init__(self, data, consensus, small_max=_SMALL_MAX, cache_tables=False):
        self.data = data
        self.consensus = consensus
        n_buckets = int(consensus.max()) + 1
        self.n_buckets = n_buckets
        self.order = np.argsort(consensus, kind="stable")
        self.sizes = np.bincount(consensus, minlength=n_buckets)
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)])
        self.bucket_mass = np.bincount(
            consensus, weights=data.item_weights, minlength=n_buckets
        )
        self.big = self.sizes > small_max
        self.big_id = np.full(n_buckets, -1, dtype=np.intp)
        self.n_big = int(self.big.sum())
        self.big_id[self.big] = np.arange(self.n_big)
        self.width = int(data.n_buckets.max()) + 1
        self._cache = (
            cache_tables and self.n_big * self.width * data.n_rankings <= _TABLE_BUDGET
        )
        self._tables = {}
        self._small_layout = None

    # ------------------------------------------------------------------
    def _layout(self, rows):
        """Members of the large buckets ``rows`` (big ids), grouped by row."""
        buckets = np.flatnonzero(self.big)[rows]
        counts = self.sizes[buckets]
        total = int(counts.sum())
        row_of = np.repeat(np.arange(rows.shape[0]), counts)
        run_start = np.repeat(np.cumsum(counts) - counts, counts)
        position = np.repeat(self.starts[buckets], counts) + (
            np.arange(total) - run_start
        )
        members = self.order[position]
        return members, row_of * self.width, self.data.item_weights[members]

    def _table(self, b, layout, n_rows):
        """Prefix masses of large buckets in ranking b, flat (n_rows, width).

        Entry ``[row, k]`` is the mass of the bucket's members ranked < k by
        ranking b (k = 0..K_max). Rows past the layout's rows are zero. When
        caching, the layout holds every large bucket and n_rows is n_large + 1.
        """
        if self._cache and b in self._tables:
            return self._tables[b]
        members, row_base, mass = layout
        cell = row_base + self.data.ranks[b][members] + 1
        table = np.bincount(cell, weights=mass, minlength=n_rows * self.width)
        table = table.astype(self.data.mass_dtype, copy=False).reshape(
            n_rows, self.width
        )
        table = np.cumsum(table, axis=1).ravel()
        if self._cache:
            self._tables[b] = table
        return table

    # ------------------------------------------------------------------
    def sums(self, query_lt, query_le, rows, buckets):
        """Ranking-weighted masses of bucket members ranked above a query.

        Parameters
        ----------
        query_lt : ndarray of shape (N, B)
            Query thresholds in the dense rank scale of each ranking: a member
            counts in ``better`` when its rank is < the threshold.
        query_le : ndarray of shape (N, B) or None
            Thresholds for ``atmost`` (member rank < threshold); None means the
            query is an item of ``data`` and ``atmost`` uses rank <= query_lt.
        rows : ndarray of shape (P,)
            Query row of each (query, bucket) pair.
        buckets : ndarray of shape (P,)
            Consensus bucket of each pair.

        Returns
        -------
        better, atmost : ndarrays of shape (P,)
        """
        n_pairs = rows.shape[0]
        better = np.zeros(n_pairs)
        atmost = np.zeros(n_pairs)
        if n_pairs == 0:
            return better, atmost
        is_big = self.big[buckets]
        small = np.flatnonzero(~is_big)
        if small.shape[0]:
            self._small_sums(query_lt, query_le, rows, buckets, small, better, atmost)
        large = np.flatnonzero(is_big)
        if large.shape[0]:
            self._big_sums(query_lt, query_le, rows, buckets, large, better, atmost)
        return better, atmost

    def _small_sums(self, query_lt, query_le, rows, buckets, pairs, better, atmost):
        data = self.data
        counts = self.sizes[buckets[pairs]]
        total = int(counts.sum())
        if total == 0:
            return
        pair_of = np.repeat(pairs, counts)
        run_start = np.repeat(np.cumsum(counts) - counts, counts)
        member_pos = np.repeat(self.starts[buckets[pairs]], counts) + (
            np.arange(total) - run_start
        )
        members = self.order[member_pos]
        step = max(1024, _PAIR_CHUNK // max(data.n_rankings, 1))
        for s in range(0, total, step):
            e = min(total, s + step)
            member_rows = data.ranks_t[members[s:e]]
            query_rows = rows[pair_of[s:e]]
            lt = query_lt[query_rows]
            mass = data.item_weights[members[s:e]]
            below = data.weighted_counts(member_rows < lt)
            if query_le is None:
                at_most = data.weighted_counts(member_rows <= lt)
            else:
                at_most = data.weighted_counts(member_rows < query_le[query_rows])
            better += np.bincount(
                pair_of[s:e], weights=mass * below, minlength=better.shape[0]
            )
            atmost += np.bincount(
                pair_of[s:e], weights=mass * at_most, minlength=atmost.shape[0]
            )

    def _big_sums(self, query_lt, query_le, rows, buckets, pairs, better, atmost):
        data = self.data
        big_rows = self.big_id[buckets[pairs]]
        if self._cache:
            needed = np.arange(self.n_big)
        else:
            # only the rows queried now (late passes of the local search query few)
            needed, big_rows = np.unique(big_rows, return_inverse=True)
            big_rows = big_rows.ravel()
        # one more row of zeros (read by the grid look-ups of window_sums)
        n_rows = needed.shape[0] + 1
        layout = None
        if not (self._cache and len(self._tables) == data.n_rankings):
            layout = self._layout(needed)
        base = big_rows * self.width
        query_rows = rows[pairs]
        # thresholds ranking-major, so that each ranking reads one contiguous row
        if query_lt is data.ranks_t:
            lt_major = data.ranks
        else:
            lt_major = np.ascontiguousarray(query_lt.T)
        le_major = None if query_le is None else np.ascontiguousarray(query_le.T)
        groups = data.weight_groups
        if groups is None:
            groups = [
                (b, b + 1, float(data.ranking_weights[b]))
                for b in range(data.n_rankings)
            ]
        n_pairs = pairs.shape[0]
        below = np.zeros(n_pairs)
        at_most = np.zeros(n_pairs)
        group_below = np.empty(n_pairs, dtype=data.mass_dtype)
        group_at_most = np.empty(n_pairs, dtype=data.mass_dtype)
        for start, stop, weight in groups:
            if weight == 0.0:
                continue
            group_below[:] = 0
            group_at_most[:] = 0
            for b in range(start, stop):
                table = self._table(b, layout, n_rows)
                index = base + lt_major[b].take(query_rows)
                group_below += table.take(index)
                if le_major is None:
                    index += 1
                else:
                    index = base + le_major[b].take(query_rows)
                group_at_most += table.take(index)
            below += weight * group_below
            at_most += weight * group_at_most
        better[pairs] += below
        atmost[pairs] += at_most

    def window_sums(self, items, window):
        """``better`` and ``atmost`` of items of ``data`` against nearby buckets.

        Parameters
        ----------
        items : ndarray of shape (A,)
        window : int
            Buckets ``consensus[item] - window .. consensus[item] + window``.

        Returns
        -------
        better, atmost : ndarrays of shape (A, 2 * window + 1)
            Zero for slots outside 0..Q-1.
        valid : ndarray of shape (A, 2 * window + 1), dtype=bool
        """
        data = self.data
        n_slots = 2 * window + 1
        slot_bucket = self.consensus[items][:, None] + (np.arange(n_slots) - window)
        valid = (slot_bucket >= 0) & (slot_bucket < self.n_buckets)
        clipped = np.clip(slot_bucket, 0, self.n_buckets - 1)
        big = valid & self.big[clipped]
        better = np.zeros(slot_bucket.shape)
        atmost = np.zeros(slot_bucket.shape)
        a_idx, s_idx = np.nonzero(valid & ~big)
        if a_idx.shape[0]:
            flat_better = np.zeros(a_idx.shape[0])
            flat_atmost = np.zeros(a_idx.shape[0])
            self._small_sums(
                data.ranks_t,
                None,
                items[a_idx],
                slot_bucket[a_idx, s_idx],
                np.arange(a_idx.shape[0]),
                flat_better,
                flat_atmost,
            )
            better[a_idx, s_idx] = flat_better
            atmost[a_idx, s_idx] = flat_atmost
        if big.any():
            # a grid of look-ups: slots that are not large buckets read a zero row
            if self._cache:
                needed = np.arange(self.n_big)
                local = self.big_id[clipped[big]]
            else:
                needed, local = np.unique(
                    self.big_id[clipped[big]], return_inverse=True
                )
            n_rows = needed.shape[0] + 1
            row = np.full(slot_bucket.shape, needed.shape[0], dtype=np.intp)
            row[big] = local.ravel()
            row_base = row * self.width
            layout = None
            if not (self._cache and len(self._tables) == data.n_rankings):
                layout = self._layout(needed)
            groups = data.weight_groups
            if groups is None:
                groups = [
                    (b, b + 1, float(data.ranking_weights[b]))
                    for b in range(data.n_rankings)
                ]
            group_better = np.empty(slot_bucket.shape, dtype=data.mass_dtype)
            group_atmost = np.empty(slot_bucket.shape, dtype=data.mass_dtype)
            index = np.empty(slot_bucket.shape, dtype=np.intp)
            for start, stop, weight in groups:
                if weight == 0.0:
                    continue
                group_better[:] = 0
                group_atmost[:] = 0
                for b in range(start, stop):
                    table = self._table(b, layout, n_rows)
                    np.add(row_base, data.ranks[b].take(items)[:, None], out=index)
                    group_better += table.take(index)
                    index += 1
                    group_atmost += table.take(index)
                better += weight * group_better
                atmost += weight * group_atmost
        return better, atmost, valid

    def range_sums(self, query_lt, query_le, first, last):
        """``better`` and ``atmost`` of queries against runs of buckets.

        Query i is compared with every bucket ``first[i] .. last[i] - 1``. The
        small buckets of a run hold consecutive items in consensus order, so
        their members are compared with the query in one block (no per-pair
        bookkeeping) and summed per bucket by differences of running sums; the
        large buckets are looked up in the tables.

        Parameters
        ----------
        query_lt, query_le : ndarrays of shape (N, B)
            As in :meth:`sums` (``query_le`` may not be None here).
        first, last : ndarrays of shape (N,)

        Returns
        -------
        better, atmost : ndarrays of shape (N, n_slots)
            Slot s of query i is bucket ``first[i] + s``; zero past ``last[i]``.
        valid : ndarray of shape (N, n_slots), dtype=bool
        """
        data = self.data
        n_queries = first.shape[0]
        n_slots = int((last - first).max()) if n_queries else 0
        slot_bucket = first[:, None] + np.arange(n_slots)[None, :]
        valid = slot_bucket < last[:, None]
        bucket = np.minimum(slot_bucket, self.n_buckets - 1)
        better = np.zeros((n_queries, n_slots))
        atmost = np.zeros((n_queries, n_slots))
        big = valid & self.big[bucket]
        if big.any():
            rows, slots = np.nonzero(big)
            flat_better = np.zeros(rows.shape[0])
            flat_atmost = np.zeros(rows.shape[0])
            self._big_sums(
                query_lt,
                query_le,
                rows,
                bucket[rows, slots],
                np.arange(rows.shape[0]),
                flat_better,
                flat_atmost,
            )
            better[rows, slots] = flat_better
            atmost[rows, slots] = flat_atmost
        # small buckets: members in consensus order, large buckets left out
        if self._small_layout is None:
            small_member = ~self.big[self.consensus[self.order]]
            members = self.order[small_member]
            counts = np.where(self.big, 0, self.sizes)
            self._small_layout = (
                np.ascontiguousarray(data.ranks_t[members]),
                data.item_weights[members],
                np.concatenate([[0], np.cumsum(counts)]),
            )
        small_ranks, small_mass, small_start = self._small_layout
        small = valid & ~big
        # queries with the same run share its members: compare them by
        # broadcasting against one contiguous slice (no gathered copies)
        runs, run_of = np.unique(
            np.stack([first, last], axis=1), axis=0, return_inverse=True
        )
        run_of = run_of.ravel()
        order = np.argsort(run_of, kind="stable")
        run_bounds = np.searchsorted(run_of[order], np.arange(runs.shape[0] + 1))
        shape = (-1, data.n_rankings)
        for r in range(runs.shape[0]):
            begin = small_start[runs[r, 0]]
            end = small_start[runs[r, 1]]
            if end == begin:
                continue
            members = small_ranks[begin:end]
            mass = small_mass[begin:end]
            queries = order[run_bounds[r] : run_bounds[r + 1]]
            step = max(1, (4 * _PAIR_CHUNK) // ((end - begin) * data.n_rankings))
            for c in range(0, queries.shape[0], step):
                chunk = queries[c : c + step]
                below = data.weighted_counts(
                    (members[None, :, :] < query_lt[chunk][:, None, :]).reshape(shape)
                ).reshape(chunk.shape[0], -1)
                at_most = data.weighted_counts(
                    (members[None, :, :] < query_le[chunk][:, None, :]).reshape(shape)
                ).reshape(chunk.shape[0], -1)
                running_below = np.zeros((chunk.shape[0], end - begin + 1))
                running_at_most = np.zeros((chunk.shape[0], end - begin + 1))
                np.cumsum(mass * below, axis=1, out=running_below[:, 1:])
                np.cumsum(mass * at_most, axis=1, out=running_at_most[:, 1:])
                # per small bucket: difference of the running sums at its ends
                bucket_run = bucket[chunk]
                lo = np.where(small[chunk], small_start[bucket_run] - begin, 0)
                hi = np.where(small[chunk], small_start[bucket_run + 1] - begin, 0)
                row = np.arange(chunk.shape[0])[:, None]
                better[chunk] += running_below[row, hi] - running_below[row, lo]
                atmost[chunk] += running_at_most[row, hi] - running_at_most[row, lo]
        return better, atmost, valid
