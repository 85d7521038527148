package org.jccl.examples.inference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** The tensor-parallel split computes the whole model: what the all-reduce and the all-gather join, done by hand. */
class MlpModelTest {
    private static final long SEED = 3;

    @Test
    void theShardsSummedThenTheirHeadColumnsJoinedGiveTheWholeModel() {
        float[] x = new float[MlpModel.IN];
        Random random = new Random(5);
        for (int i = 0; i < x.length; i++) x[i] = random.nextFloat() * 2 - 1;
        float[] whole = MlpModel.reference(SEED).forward(x);
        for (int ranks : new int[] {1, 2, 4, 8}) {
            MlpModel[] shards = new MlpModel[ranks];
            float[] y = new float[MlpModel.IN];
            for (int r = 0; r < ranks; r++) {
                shards[r] = new MlpModel(SEED, r, ranks);
                float[] partial = shards[r].partialBlock(x, 1);
                for (int j = 0; j < y.length; j++) y[j] += partial[j]; // the all-reduce
            }
            float[] z = new float[MlpModel.OUT];
            int part = MlpModel.OUT / ranks;
            for (int r = 0; r < ranks; r++) System.arraycopy(shards[r].headPart(y, 1), 0, z, r * part, part); // the all-gather
            for (int o = 0; o < z.length; o++) {
                assertEquals(whole[o], z[o], 1e-5f + 1e-4f * Math.abs(whole[o]), ranks + " ranks, output " + o);
            }
        }
    }

    @Test
    void weightsDependOnTheSeedAndRanksMustDivideTheWidths() {
        float[] x = new float[MlpModel.IN];
        x[0] = 1;
        assertArrayEquals(MlpModel.reference(SEED).forward(x), MlpModel.reference(SEED).forward(x));
        assertNotEquals(MlpModel.reference(SEED).forward(x)[0], MlpModel.reference(SEED + 1).forward(x)[0]);
        assertThrows(IllegalArgumentException.class, () -> new MlpModel(SEED, 0, 3));
        assertThrows(IllegalStateException.class, () -> new MlpModel(SEED, 0, 2).forward(x));
    }
}
