// Load generator for the peer game: node driver.js <url> <clients> <seconds> <server pid>
// Creates and joins enough matches first (untimed), then each of <clients> seat clients
// (boardgame.io's own Client over socket.io, websocket transport; 4 seats a match) plays its
// matches for <seconds>: it decides as soon as the step it has not decided yet is shown, and a
// move counts once the server's update shows it (its latency: sent to shown; the game's move is
// ignoreStaleStateID, so a move is never refused for another seat's move: sent once). Prints one JSON
// line: moves, wall time, latencies, errors, the server process's CPU seconds over the phase.
const fs = require('fs');
const { Client } = require('boardgame.io/client');
const { SocketIO } = require('boardgame.io/multiplayer');
const { Cave, STEPS } = require('./game');

const [url, clientsArg, secondsArg, serverPid] = process.argv.slice(2);
const clients = Number(clientsArg);
const seconds = Number(secondsArg);
const SEATS = 4;
const tables = Math.ceil(clients / SEATS);

function cpuSeconds(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').pop().trim().split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, USER_HZ = 100
}

async function post(path, body) {
  const res = await fetch(url + path, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return res.json();
}

async function newMatch() {
  const { matchID } = await post('/games/cave/create', { numPlayers: SEATS });
  const creds = [];
  for (let p = 0; p < SEATS; p++) {
    const r = await post(`/games/cave/${matchID}/join`, { playerID: String(p), playerName: `p${p}` });
    creds.push(r.playerCredentials);
  }
  return { matchID, creds };
}

const lat = [];
let moves = 0;
let errors = 0;
let finished = 0;
let stopAt = Infinity;

const stoppers = [];

function seat(playerID, pool) {
  return new Promise((resolve) => {
    let match = pool.shift();
    const client = Client({
      game: Cave, numPlayers: SEATS, debug: false, matchID: match.matchID,
      playerID: String(playerID), credentials: match.creds[playerID],
      multiplayer: SocketIO({ server: url, socketOpts: { transports: ['websocket'] } }),
    });
    let sentStep = -1;
    let sentAt = 0n;
    let choice = 'continue';
    let pending = false; // a move sent and not yet shown
    let switching = false; // left a finished match: its last state is ignored until the next's
    let done = false;
    const stop = () => {
      if (done) return;
      done = true;
      client.stop();
      resolve();
    };
    stoppers.push(stop);
    client.subscribe((state) => {
      if (done || !state || !state.G || state.G.step === undefined) return;
      const G = state.G;
      if (switching) {
        if (state.ctx.gameover) return;
        switching = false;
      }
      if (pending && (G.step > sentStep || G.mine !== undefined)) {
        lat.push(Number(process.hrtime.bigint() - sentAt) / 1e6);
        moves += 1;
        pending = false;
      }
      if (Date.now() >= stopAt) { stop(); return; }
      if (state.ctx.gameover) {
        if (playerID === 0) finished += 1;
        match = pool.shift();
        if (!match) { errors += 1; stop(); return; } // out of matches: counted as an error
        switching = true;
        sentStep = -1;
        pending = false;
        setImmediate(() => {
          if (done) return;
          client.updateCredentials(match.creds[playerID]);
          client.updateMatchID(match.matchID);
        });
        return;
      }
      if (!pending && G.step > sentStep && G.mine === undefined && state.isConnected) {
        sentStep = G.step;
        pending = true;
        choice = Math.random() < 0.75 ? 'continue' : 'return';
        // not from inside the subscriber: a move notifies the subscribers synchronously
        setImmediate(() => {
          if (done) return;
          sentAt = process.hrtime.bigint();
          client.moves.decide(choice);
        });
      }
    });
    client.start();
  });
}

async function main() {
  // matches enough for the whole phase (each match is 30 steps x 4 seats = 120 moves)
  const perTable = Math.max(4, Math.ceil(seconds * 4000 / (STEPS * SEATS) / tables) + 2);
  const pools = [];
  for (let t = 0; t < tables; t++) {
    const pool = [];
    for (let i = 0; i < perTable; i++) pool.push(await newMatch());
    pools.push(pool);
  }
  const cpu0 = cpuSeconds(serverPid);
  const own0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  stopAt = Date.now() + seconds * 1000;
  setTimeout(() => stoppers.forEach((stop) => stop()), seconds * 1000 + 50);
  const seats = [];
  for (let t = 0; t < tables; t++) {
    // each seat of a table walks the same list of matches
    for (let p = 0; p < SEATS && t * SEATS + p < clients; p++) seats.push(seat(p, [...pools[t]]));
  }
  await Promise.all(seats);
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = cpuSeconds(serverPid) - cpu0;
  const own = process.cpuUsage(own0);
  lat.sort((a, b) => a - b);
  const pct = (q) => (lat.length ? lat[Math.min(lat.length - 1, Math.round(q * (lat.length - 1)))] : null);
  console.log(JSON.stringify({
    moves, wall_s: wall, errors, matches_finished: finished,
    p50_ms: pct(0.5), p99_ms: pct(0.99), server_cpu_s: cpu,
    driver_cpu_s: (own.user + own.system) / 1e6,
  }));
  process.exit(0);
}

main().catch((e) => { console.error(e); process.exit(1); });
