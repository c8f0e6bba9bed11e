/*
 * weaken_verneed FILE VERSION...
 *
 * Marks the named version requirements (e.g. GLIBC_2.38, GLIBCXX_3.4.32)
 * of an x86-64/aarch64 ELF file as weak (VER_FLG_WEAK in .gnu.version_r).
 * The dynamic loader refuses to start a program whose libc.so.6 lacks a
 * required version, even when another library (our shim) defines the
 * symbols under that version; a weak requirement is only checked at symbol
 * lookup, where the shim's versioned definitions satisfy it.
 * Part of conformance/setup.sh (see docs/CONFORMANCE.md). Idempotent.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s FILE VERSION...\n", argv[0]);
        return 2;
    }
    int fd = open(argv[1], O_RDWR);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(argv[1]);
        return 1;
    }
    unsigned char *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    Elf64_Ehdr *eh = (Elf64_Ehdr *)p;
    if ((size_t)st.st_size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff == 0) {
        fprintf(stderr, "%s: not a 64-bit ELF file with section headers\n", argv[1]);
        return 1;
    }
    Elf64_Shdr *sh = (Elf64_Shdr *)(p + eh->e_shoff);
    int found = 0;
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_GNU_verneed) continue;
        const char *strtab = (const char *)(p + sh[sh[i].sh_link].sh_offset);
        unsigned char *vp = p + sh[i].sh_offset;
        for (;;) {
            Elf64_Verneed *vn = (Elf64_Verneed *)vp;
            unsigned char *ap = vp + vn->vn_aux;
            for (int k = 0; k < vn->vn_cnt; k++) {
                Elf64_Vernaux *va = (Elf64_Vernaux *)ap;
                const char *name = strtab + va->vna_name;
                for (int a = 2; a < argc; a++) {
                    if (strcmp(name, argv[a]) == 0) {
                        found++;
                        va->vna_flags |= VER_FLG_WEAK;
                        printf("%s: %s (from %s) is weak\n", argv[1], name, strtab + vn->vn_file);
                    }
                }
                if (va->vna_next == 0) break;
                ap += va->vna_next;
            }
            if (vn->vn_next == 0) break;
            vp += vn->vn_next;
        }
    }
    if (msync(p, (size_t)st.st_size, MS_SYNC) != 0) {
        perror("msync");
        return 1;
    }
    munmap(p, (size_t)st.st_size);
    close(fd);
    if (found < argc - 2) {
        fprintf(stderr, "%s: only %d of %d versions found in .gnu.version_r\n", argv[1], found, argc - 2);
        return 1;
    }
    return 0;
}
