// tma.cuh — what the products in tiles by the tensor memory accelerator
// and wgmma (mmh.cu, mmi.cu) share: their tiles of weight rows, the
// copies by TMA onto mbarriers, the matrix descriptors and wgmma's fences.
// The builder of a kernel's source (lib/kernels.c) puts this file where
// the kernel includes it, after parts.cuh and the kernel's BP (a part's
// rows a tile) and MAPS_AT (the parameter of its tensor maps).

// ---- the tiles of weight rows

DEV u32 tiles_of(long n)
{
    return (u32)((n + BP - 1) / BP);
}

// The tiles of weight rows, all parts'.
DEV u32 all_tiles()
{
    return tiles_of(N0) + (GATED ? 0 : tiles_of(N1)) + tiles_of(N2) + tiles_of(N3);
}

// Tile y's part and its first row.
DEV Unit tile_of(u32 y)
{
    u32 t0 = tiles_of(N0), t1 = GATED ? 0 : tiles_of(N1), t2 = tiles_of(N2);
    if (y < t0)
        return Unit{0, (int)(y * BP)};
    if (y < t0 + t1)
        return Unit{1, (int)((y - t0) * BP)};
    if (y < t0 + t1 + t2)
        return Unit{2, (int)((y - t0 - t1) * BP)};
    return Unit{3, (int)((y - t0 - t1 - t2) * BP)};
}

// ---- the tensor memory accelerator and the barriers

DEV void mb_init(u32 b, int n)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(b), "r"(n) : "memory");
}

DEV void mb_expect(u32 b, u32 n)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(n) : "memory");
}

DEV void mb_wait(u32 b, int parity)
{
    u32 ok;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(ok) : "r"(b), "r"(parity) : "memory");
    } while (!ok);
}

// A box of the tensor map at map (in device memory) from (c0, c1) into dst.
DEV void tma2d(u32 dst, const char *map, int c0, int c1, u32 bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(bar) : "memory");
}

DEV const char *map_of(const Params &p, int i)
{
    return (const char *)p.a[MAPS_AT] + 128 * i;
}

// ---- wgmma

// A shared-memory matrix descriptor: K-major rows of 128 bytes in the
// 128-byte swizzle, 8-row groups 1024 bytes apart.
DEV u64 desc(u32 addr)
{
    return (u64)((addr & 0x3FFFF) >> 4) | (u64)1 << 16 | (u64)(1024 >> 4) << 32 | (u64)1 << 62;
}

DEV void wg_fence()
{
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

DEV void wg_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

template <int N> DEV void wg_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
