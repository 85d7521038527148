package org.jccl.core.rendezvous;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SlurmHostListTest {
    @Test
    void rangesAndSinglesExpandInOrderKeepingThePadding() {
        assertEquals(List.of("gpu01", "gpu02", "gpu03", "gpu07", "login1"), SlurmHostList.expand("gpu[01-03,07],login1"));
        assertEquals(List.of("n08", "n09", "n10", "n100"), SlurmHostList.expand("n[08-10,100]"));
        assertEquals("gpu01", SlurmHostList.first("gpu[01-03,07],login1"));
        assertEquals("login1", SlurmHostList.first("login1,gpu[01-03]"));
    }

    @Test
    void severalBracketsMakeEveryCombinationAndSuffixesStay() {
        assertEquals(List.of("rack1-n1.ib", "rack1-n2.ib", "rack2-n1.ib", "rack2-n2.ib"),
                SlurmHostList.expand("rack[1-2]-n[1-2].ib"));
        assertEquals(List.of("a", "b-1", "b-3", "c"), SlurmHostList.expand(" a , b-[1,3],c"));
        assertEquals(List.of("127.0.0.1", "127.0.0.2"), SlurmHostList.expand("127.0.0.[1-2]"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"n[0-999999999999]", "a[0-2000]b[0-2000]"})
    void listsOfMoreHostsThanAnyClusterAreRefusedWithoutExpandingThem(String list) {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> SlurmHostList.first(list));
        assertTrue(e.getMessage().contains("more than " + SlurmHostList.MAX_HOSTS + " hosts"), e.getMessage());
    }

    /**
     * Forty brackets of a million numbers each, 401 characters: each bracket is within the limit, their product is
     * 10^240 hosts. Expanding bracket by bracket made a million names per bracket before the host cap was checked
     * (gigabytes, or the heap exhausted); reading the list and counting first costs memory in proportion to its
     * length. The thread's allocation counter shows which happened, whatever the heap and the machine's speed.
     */
    @Test
    void aShortListOfManyLargeBracketsIsRefusedBeforeAnyHostIsMade() {
        String list = "n" + "[0-999999]".repeat(40);
        assertEquals(401, list.length());
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> SlurmHostList.expand(list));
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertTrue(e.getMessage().contains("more than " + SlurmHostList.MAX_HOSTS + " hosts"), e.getMessage());
        assertTrue(allocated < 1 << 20, "refusing the list allocated " + allocated + " bytes");
        InvalidArgumentException fromEnvironment = assertThrows(InvalidArgumentException.class,
                () -> JobEnvironment.detect(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "2", "SLURM_JOB_NODELIST", list)));
        assertTrue(fromEnvironment.getMessage().contains("more than " + SlurmHostList.MAX_HOSTS + " hosts"),
                fromEnvironment.getMessage());
    }

    @Test
    void theCapCountsTheHostsOfEveryEntryTogether() {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> SlurmHostList.first("a[0-999999],b[0-999999]"));
        assertTrue(e.getMessage().contains("more than " + SlurmHostList.MAX_HOSTS + " hosts"), e.getMessage());
        assertEquals(List.of("a0", "a1", "b07", "b08", "c"), SlurmHostList.expand("a[0-1],b[07-08],c"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "a,,b", "gpu[01-03", "gpu01-03]", "gpu[[1]]", "gpu[3-1]", "gpu[a-b]", "gpu[]", "gpu[1-]"})
    void malformedListsAreRefusedNamingTheList(String list) {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> SlurmHostList.expand(list));
        assertTrue(e.getMessage().contains("Slurm host list '" + list + "'"), e.getMessage());
    }
}
