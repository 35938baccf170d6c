#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR GPL-2.0-only
"""Golden values of mainline's airtime estimator, from a model independent of the crate.

Regenerate (from the workspace root):

    python3 airtime-est/tests/golden/gen.py > airtime-est/tests/golden/mainline.txt

and `cargo test -p airtime-est --test golden` compares the crate against the file.

Where the constants come from: Linux net/mac80211/airtime.c as of 6.18 (the version with
EHT groups), read as a behavioural description and retyped here; no line of it is
copied. Nothing is read from the crate: the bits-per-symbol rows below are the arguments
of mainline's group macros, not the crate's `tables::bits`.

* AVG_PKT_SIZE 1024, MCS_NBITS (AVG_PKT_SIZE << 3) and MCS_N_KSYMS(bps),
  DIV_ROUND_UP(MCS_NBITS << 10, bps): `ksyms` below.
* MCS_SYMBOL_TIME(sgi, ksyms): ksyms * 4 long GI, ksyms * 4 * 18 / 20 short GI.
* HE_SYMBOL_TIME(gi, ksyms): ksyms * 16 * 17 / 20 (GI 0.8), ksyms * 16 * 18 / 20
  (GI 1.6), ksyms * 16 (GI 3.2); EHT_DURATION uses it too.
* MCS_DURATION / HE_DURATION: the symbol time of MCS_N_KSYMS(streams * bps), cast to
  u32; MCS_DURATION_S / HE_DURATION_S / EHT_DURATION_S: that >> shift, stored in the
  u16 `duration` field of struct mcs_group (so truncated to 16 bits).
* GROUP_SHIFT(duration): max(0, 16 - __builtin_clz(duration)), of the MCS0 duration of
  the group: MCS_GROUP_SHIFT (26 / 54 bits), VHT_GROUP_SHIFT (note its 243, not 234, at
  160 MHz), HE_GROUP_SHIFT and EHT_GROUP_SHIFT (the MCS0 row).
* The rows: __MCS_GROUP (HT20 26..260, HT40 54..540), __VHT_GROUP and __HE_GROUP through
  BW2VBPS(bw, r160, r80, r40, r20), __EHT_GROUP through EHT_BW2VBPS(bw, r320, r160, r80,
  r40, r20). Streams: HT and VHT 1..4 (IEEE80211_MAX_STREAMS), HE and EHT 1..8.
* ieee80211_get_rate_duration: duration[idx] << shift, overhead 36 + 4 * streams; VHT
  above 4 streams returns 0 before setting the overhead.
* ieee80211_calc_legacy_rate_duration: CCK 144 + 48 (halved with the short preamble)
  + 10, OFDM 20 + 16, plus (len * 8 * 10) / bitrate (bitrate in 100 kbit/s).
* ieee80211_calc_rx_airtime: 0 if the duration is 0, else (u32)(duration * len) / 1024
  / 1024 + overhead.
* ieee80211_calc_expected_tx_airtime: len += 38; legacy or not aggregated:
  ieee80211_calc_rx_airtime; else agg_shift 1..6 from the duration (> 400, 250, 150,
  70 * 1024; 6 only for HE at or below 20 * 1024), overhead initialised to 0,
  max((u32)(duration * len) / 1024 / 1024 + (overhead >> agg_shift), 4).

Left out on purpose: 1 Mbit/s CCK with the short preamble (the crate prices it with
the long one, a documented difference).
"""

import sys

M32 = (1 << 32) - 1

# --- the table macros ---------------------------------------------------------------


def ksyms(bps):
    nbits = 1024 << 3
    return -(-(nbits << 10) // bps)  # DIV_ROUND_UP


def mcs_symbol_time(sgi, k):
    return (k * 4 * 18) // 20 if sgi else k * 4


def he_symbol_time(gi, k):
    if gi == 0:
        return (k * 16 * 17) // 20
    if gi == 1:
        return (k * 16 * 18) // 20
    return k * 16


def group_shift(duration):
    duration &= M32
    clz = 32 - duration.bit_length()
    return max(0, 16 - clz)


# Bits per symbol per stream: (r20, r40, r80, r160[, r320]) for each MCS, in the order of
# the macros' arguments reversed so that index = bandwidth (0 = 20 MHz).
HT_ROWS = [[26, 52, 78, 104, 156, 208, 234, 260], [54, 108, 162, 216, 324, 432, 486, 540]]
# BW2VBPS(_bw, 160, 80, 40, 20) per MCS 0..9
VHT_MACRO = [
    (234, 117, 54, 26), (468, 234, 108, 52), (702, 351, 162, 78), (936, 468, 216, 104),
    (1404, 702, 324, 156), (1872, 936, 432, 208), (2106, 1053, 486, 234),
    (2340, 1170, 540, 260), (2808, 1404, 648, 312), (3120, 1560, 720, 346),
]
VHT_SHIFT_MACRO = (243, 117, 54, 26)  # VHT_GROUP_SHIFT's row
# BW2VBPS(_bw, 160, 80, 40, 20) per MCS 0..11
HE_MACRO = [
    (979, 489, 230, 115), (1958, 979, 475, 230), (2937, 1468, 705, 345),
    (3916, 1958, 936, 475), (5875, 2937, 1411, 705), (7833, 3916, 1872, 936),
    (8827, 4406, 2102, 1051), (9806, 4896, 2347, 1166), (11764, 5875, 2808, 1411),
    (13060, 6523, 3124, 1555), (14702, 7344, 3513, 1756), (16329, 8164, 3902, 1944),
]
# EHT_BW2VBPS(_bw, 320, 160, 80, 40, 20) per MCS 0..13
EHT_MACRO = [
    (1960, 980, 490, 234, 117), (3920, 1960, 980, 468, 234), (5880, 2937, 1470, 702, 351),
    (7840, 3920, 1960, 936, 468), (11760, 5880, 2940, 1404, 702),
    (15680, 7840, 3920, 1872, 936), (17640, 8820, 4410, 2106, 1053),
    (19600, 9800, 4900, 2340, 1170), (23520, 11760, 5880, 2808, 1404),
    (26133, 13066, 6533, 3120, 1560), (29400, 14700, 7350, 3510, 1755),
    (32666, 16333, 8166, 3900, 1950), (35280, 17640, 8820, 4212, 2106),
    (39200, 19600, 9800, 4680, 2340),
]


def by_bw(macro_args, bw):
    """The argument of BW2VBPS / EHT_BW2VBPS for bandwidth index bw (0 = 20 MHz)."""
    return macro_args[len(macro_args) - 1 - bw]


def group(enc, bw, gi, nss):
    """(shift, stored u16 entries) of one mainline group."""
    if enc == "ht":
        rows = [HT_ROWS[bw][i] for i in range(8)]
        shift_bits = HT_ROWS[bw][0]
    elif enc == "vht":
        rows = [by_bw(r, bw) for r in VHT_MACRO]
        shift_bits = by_bw(VHT_SHIFT_MACRO, bw)
    elif enc == "he":
        rows = [by_bw(r, bw) for r in HE_MACRO]
        shift_bits = by_bw(HE_MACRO[0], bw)
    else:
        rows = [by_bw(r, bw) for r in EHT_MACRO]
        shift_bits = by_bw(EHT_MACRO[0], bw)
    if enc in ("ht", "vht"):
        dur = lambda bps: mcs_symbol_time(gi, ksyms(nss * bps)) & M32
    else:
        dur = lambda bps: he_symbol_time(gi, ksyms(nss * bps)) & M32
    s = group_shift(dur(shift_bits))
    return s, [(dur(b) >> s) & 0xFFFF for b in rows]


GROUPS = {"ht": (2, 2, 4), "vht": (4, 2, 4), "he": (4, 3, 8), "eht": (5, 3, 8)}  # bws, gis, nss


def all_groups():
    for enc, (bws, gis, max_nss) in GROUPS.items():
        for bw in range(bws):
            for gi in range(gis):
                for nss in range(1, max_nss + 1):
                    yield enc, bw, gi, nss


# --- the estimates ------------------------------------------------------------------


def rate_duration(enc, mcs, nss, bw, gi):
    """ieee80211_get_rate_duration: (duration, overhead or None if left unset)."""
    if enc == "ht":
        nss, idx = ((mcs >> 3) & 3) + 1, mcs & 7
    else:
        idx = mcs
    if enc in ("ht", "vht") and nss > 4:
        return 0, None
    s, entries = group(enc, bw, gi, nss)
    return (entries[idx] << s) & M32, 36 + (nss << 2)


def legacy(cck, short, bitrate, length):
    if cck:
        d = 144 + 48
        if short:
            d >>= 1
        d += 10
    else:
        d = 20 + 16
    return (d + (((length << 3) * 10) & M32) // bitrate) & M32


def rx_airtime(rate, length):
    enc, a, b, c, d = rate
    if enc in ("cck", "ofdm"):
        return legacy(enc == "cck", b == 1, a, length)
    t, overhead = rate_duration(enc, a, b, c, d)
    if not t:
        return 0
    return ((((t * length) & M32) // 1024 // 1024) + overhead) & M32


def expected(rate, length, ampdu):
    enc, a, b, c, d = rate
    length += 38
    if enc in ("cck", "ofdm") or not ampdu:
        return rx_airtime(rate, length)
    t, overhead = rate_duration(enc, a, b, c, d)
    overhead = overhead or 0  # initialised to 0, left so when the lookup fails
    if t > 400 * 1024:
        agg_shift = 1
    elif t > 250 * 1024:
        agg_shift = 2
    elif t > 150 * 1024:
        agg_shift = 3
    elif t > 70 * 1024:
        agg_shift = 4
    elif enc != "he" or t > 20 * 1024:
        agg_shift = 5
    else:
        agg_shift = 6
    us = ((((t * length) & M32) // 1024 // 1024) + (overhead >> agg_shift)) & M32
    return max(us, 4)


def all_mcs_rates():
    for enc, bw, gi, nss in all_groups():
        for mcs in range(len(group(enc, bw, gi, nss)[1])):
            if enc == "ht":
                yield ("ht", (nss - 1) * 8 + mcs, 0, bw, gi)
            else:
                yield (enc, mcs, nss, bw, gi)


def sample_rates():
    """The rates whose estimates are written out: every legacy rate, the slowest and
    fastest of each encoding, VHT beyond mainline's 4 streams, and 48 picked by a fixed
    linear congruential generator over every rate mainline prices."""
    out = [("cck", r, 0, 0, 0) for r in (10, 20, 55, 110)]
    out += [("cck", r, 1, 0, 0) for r in (20, 55, 110)]
    out += [("ofdm", r, 0, 0, 0) for r in (60, 90, 120, 180, 240, 360, 480, 540)]
    out += [
        ("ht", 0, 0, 0, 0), ("ht", 0, 0, 1, 1), ("ht", 31, 0, 1, 1), ("ht", 7, 0, 0, 0),
        ("vht", 0, 1, 0, 0), ("vht", 9, 1, 2, 1), ("vht", 9, 4, 3, 1), ("vht", 0, 1, 2, 0),
        ("vht", 9, 5, 2, 1), ("vht", 0, 8, 0, 0),
        ("he", 0, 1, 0, 2), ("he", 0, 1, 0, 0), ("he", 11, 8, 3, 0), ("he", 6, 2, 1, 0),
        ("he", 11, 1, 2, 0), ("eht", 0, 1, 0, 2), ("eht", 13, 8, 4, 0), ("eht", 9, 2, 3, 1),
    ]
    everything = list(all_mcs_rates())
    x = 2024
    for _ in range(48):
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        out.append(everything[(x >> 33) % len(everything)])
    return out


LENGTHS = [0, 1, 60, 1500, 3290, 3291, 4000, 7935, 11454]


def main():
    w = sys.stdout.write
    w("# Golden values of mainline's net/mac80211/airtime.c (6.18), from\n")
    w("# airtime-est/tests/golden/gen.py; regenerate with it, never by hand.\n")
    w("# group <enc> <bw> <gi> <nss> <shift> <stored u16 entry per MCS...>\n")
    w("#   bw 0..4 = 20..320 MHz; gi 0/1 = long/short (HT, VHT) or 0.8/1.6/3.2 us (HE, EHT)\n")
    for enc, bw, gi, nss in all_groups():
        s, entries = group(enc, bw, gi, nss)
        w(f"group {enc} {bw} {gi} {nss} {s} {' '.join(map(str, entries))}\n")
    w("# est <enc> <a> <b> <bw> <gi> <len> <rx_airtime> <expected aggregated> <expected single>\n")
    w("#   ht: a = MCS 0..31, b = 0; vht/he/eht: a = MCS, b = streams;\n")
    w("#   cck/ofdm: a = bitrate in 100 kbit/s, b = short preamble (CCK)\n")
    for rate in sample_rates():
        for length in LENGTHS:
            enc, a, b, c, d = rate
            vals = (rx_airtime(rate, length), expected(rate, length, True), expected(rate, length, False))
            w(f"est {enc} {a} {b} {c} {d} {length} {vals[0]} {vals[1]} {vals[2]}\n")
    # Where mainline's 32-bit product wraps, for the crate's documentation (stderr).
    for frame_len in (3290, 3291, 4000, 7935, 11454):
        wraps = [r for r in all_mcs_rates() if rate_duration(*r)[0] * (frame_len + 38) > M32]
        sys.stderr.write(f"frame_len {frame_len} (L = {frame_len + 38}): {len(wraps)} rates wrap\n")


if __name__ == "__main__":
    main()
