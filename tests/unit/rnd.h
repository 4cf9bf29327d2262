/* rnd.h — the unit tests' random values: xorshift64 over a seed of the
 * test's own, each value in [-1, 1] and never near zero (|v| >= 0.05). */
#ifndef RND_H
#define RND_H

#include <math.h>
#include <stdint.h>

static float rnd_next(uint64_t *seed)
{
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    float u = (float)((*seed >> 11) % 2000001) / 1000000.0f - 1.0f;
    return fabsf(u) < 0.05f ? (u < 0 ? -0.05f : 0.05f) + u : u;
}

#endif
