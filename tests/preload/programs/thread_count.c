/* Reports what a preload could change in a plain program: its thread
 * count, and an exit status given on the command line. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  int threads = 0;
  DIR* d = opendir("/proc/self/task");
  if (d) {
    struct dirent* e;
    while ((e = readdir(d)) != NULL)
      if (e->d_name[0] != '.') threads++;
    closedir(d);
  }
  printf("threads %d\n", threads);
  return argc > 1 ? atoi(argv[1]) : 0;
}
