"""Deterministic synthetic audio for the streaming examples: speech-like bursts and silence.

A burst is a voiced "utterance": a glottal pulse train (a fundamental of 90-250 Hz that
glides, with its harmonics) through three formant resonances that move every syllable,
under a syllable envelope of 3-6 Hz (down to 35% between syllables), plus a little breath
noise; bursts last 0.3-1.5 s
and the gaps 0.2-1.2 s, with a background noise 40 dB below the speech. Every number
comes from one seeded generator, so a (length, seed) gives the same samples everywhere.
"""

from __future__ import annotations

import numpy as np

SAMPLE_RATE = 16000


def speech_like(samples: int, seed: int = 0, sample_rate: int = SAMPLE_RATE
                ) -> tuple[np.ndarray, np.ndarray]:
    """(audio float32 [samples] in about [-0.5, 0.5], speech bool [samples])."""
    rng = np.random.default_rng(seed)
    audio = rng.normal(0.0, 0.003, samples)  # background noise
    speech = np.zeros(samples, dtype=bool)
    t = int(rng.uniform(0.1, 0.5) * sample_rate)
    while t < samples:
        length = min(int(rng.uniform(0.3, 1.5) * sample_rate), samples - t)
        audio[t:t + length] += _utterance(length, rng, sample_rate)
        speech[t:t + length] = True
        t += length + int(rng.uniform(0.2, 1.2) * sample_rate)
    return audio.astype(np.float32), speech


def _utterance(length: int, rng: np.random.Generator, sample_rate: int) -> np.ndarray:
    time = np.arange(length) / sample_rate
    f0 = rng.uniform(90, 250) * (1 + 0.15 * np.sin(2 * np.pi * rng.uniform(0.5, 2) * time))
    phase = 2 * np.pi * np.cumsum(f0) / sample_rate
    source = sum(np.sin(k * phase) / k for k in range(1, 25))  # a sawtooth-like pulse train
    syllable_rate = rng.uniform(3, 6)
    envelope = 0.35 + 0.65 * np.sin(np.pi * syllable_rate * time) ** 2  # syllables
    envelope *= np.minimum(1, np.minimum(time, time[-1] - time) * 40)  # 25 ms fades
    voiced = np.zeros(length)
    syllable = max(1, int(sample_rate / syllable_rate))
    for start in range(0, length, syllable):
        piece = source[start:start + syllable]
        formants = rng.uniform([300, 900, 2200], [800, 2200, 3200])
        voiced[start:start + syllable] = _formants(piece, formants, sample_rate)
    voiced /= np.abs(voiced).max() + 1e-9
    breath = rng.normal(0, 0.05, length)
    return rng.uniform(0.15, 0.4) * envelope * (voiced + breath)


def _formants(x: np.ndarray, frequencies: np.ndarray, sample_rate: int) -> np.ndarray:
    """`x` through resonances at `frequencies` (bandwidth 80 Hz + f/10), in the frequency
    domain: the sum of their magnitude responses, a resonance peak each."""
    spectrum = np.fft.rfft(x)
    f = np.fft.rfftfreq(len(x), 1.0 / sample_rate)
    response = sum(1.0 / (1.0 + ((f - fc) / (40 + fc / 20)) ** 2) for fc in frequencies)
    return np.fft.irfft(spectrum * response, n=len(x))
