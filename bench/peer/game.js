// The peer game for bench/peer_boardgameio.py: a Diamant-like step of simultaneous hidden
// choices. 4 seats all active at once (activePlayers ALL); each seat decides "continue" or
// "return" once per step; when the last one has decided, the step resolves with a random
// draw (ctx's random plugin, seeded by the server) and the next step starts. 30 steps, then
// the game ends. Each seat sees only its own pending choice (playerView), as in Diamant.
const { ActivePlayers, INVALID_MOVE } = require('boardgame.io/core');

const STEPS = 30;

const Cave = {
  name: 'cave',
  setup: () => ({ step: 0, choices: {}, revealed: {}, draws: [] }),
  turn: { activePlayers: ActivePlayers.ALL },
  moves: {
    decide: {
      move: ({ G, ctx, playerID, random }, choice) => {
        if (choice !== 'continue' && choice !== 'return') return INVALID_MOVE;
        if (G.choices[playerID] !== undefined) return INVALID_MOVE;
        G.choices[playerID] = choice;
        if (Object.keys(G.choices).length === ctx.numPlayers) {
          G.draws.push(random.D6());
          G.revealed = G.choices;
          G.choices = {};
          G.step += 1;
        }
      },
      client: false, // decided by the server only (it draws at random)
      // simultaneous choices: a seat's move stands whatever the others did since its client
      // last saw the game (boardgame.io's option for this; the move checks the seat itself)
      ignoreStaleStateID: true,
    },
  },
  endIf: ({ G }) => (G.step >= STEPS ? { steps: G.step } : undefined),
  playerView: ({ G, playerID }) => ({
    step: G.step,
    draws: G.draws,
    revealed: G.revealed,
    chosen: Object.keys(G.choices),
    mine: G.choices[playerID],
  }),
};

module.exports = { Cave, STEPS };
