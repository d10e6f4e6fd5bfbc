/**
 * Emoji short codes as ntfy's clients read tags: a tag that is a short code (GitHub's gemoji
 * names) shows as its emoji before the title; any other tag stays a tag. A built-in table of the
 * codes notifications use most (alerts, states, devices, weather, a few faces and objects).
 */
const EMOJI: Record<string, string> = {
  // Alerts and states
  warning: '⚠️', rotating_light: '🚨', no_entry: '⛔', no_entry_sign: '🚫', stop_sign: '🛑', sos: '🆘', bangbang: '‼️',
  exclamation: '❗', heavy_exclamation_mark: '❗', grey_exclamation: '❕', question: '❓', grey_question: '❔', interrobang: '⁉️',
  x: '❌', negative_squared_cross_mark: '❎', heavy_multiplication_x: '✖️', white_check_mark: '✅', heavy_check_mark: '✔️',
  ballot_box_with_check: '☑️', information_source: 'ℹ️', skull: '💀', skull_and_crossbones: '☠️', fire: '🔥', boom: '💥',
  zap: '⚡', construction: '🚧', triangular_flag_on_post: '🚩', checkered_flag: '🏁', bell: '🔔', no_bell: '🔕',
  loudspeaker: '📢', mega: '📣', new: '🆕', ok: '🆗', up: '🆙', cool: '🆒', free: '🆓', recycle: '♻️', hourglass: '⌛',
  hourglass_flowing_sand: '⏳', alarm_clock: '⏰', stopwatch: '⏱️', timer_clock: '⏲️', calendar: '📅', date: '📅',
  // Colours
  red_circle: '🔴', orange_circle: '🟠', yellow_circle: '🟡', green_circle: '🟢', large_blue_circle: '🔵', blue_circle: '🔵',
  purple_circle: '🟣', white_circle: '⚪', black_circle: '⚫', red_square: '🟥', green_square: '🟩', yellow_square: '🟨',
  // Celebration and reactions
  tada: '🎉', partying_face: '🥳', confetti_ball: '🎊', sparkles: '✨', star: '⭐', star2: '🌟', trophy: '🏆', medal: '🏅',
  '+1': '👍', thumbsup: '👍', '-1': '👎', thumbsdown: '👎', clap: '👏', wave: '👋', muscle: '💪', pray: '🙏', eyes: '👀',
  ok_hand: '👌', heart: '❤️', broken_heart: '💔', smile: '😄', grinning: '😀', joy: '😂', wink: '😉', sunglasses: '😎',
  thinking: '🤔', cry: '😢', sob: '😭', rage: '😡', angry: '😠', scream: '😱', sweat_smile: '😅', see_no_evil: '🙈',
  ghost: '👻', robot: '🤖', alien: '👽', poop: '💩', hankey: '💩', rocket: '🚀', dart: '🎯', gift: '🎁', balloon: '🎈',
  // Devices and work
  computer: '💻', desktop_computer: '🖥️', keyboard: '⌨️', floppy_disk: '💾', cd: '💿', dvd: '📀', iphone: '📱', phone: '☎️',
  telephone_receiver: '📞', tv: '📺', camera: '📷', movie_camera: '🎥', video_camera: '📹', satellite: '📡', signal_strength: '📶',
  battery: '🔋', electric_plug: '🔌', bulb: '💡', flashlight: '🔦', package: '📦', lock: '🔒', unlock: '🔓', key: '🔑',
  old_key: '🗝️', shield: '🛡️', gear: '⚙️', wrench: '🔧', hammer: '🔨', hammer_and_wrench: '🛠️', toolbox: '🧰', nut_and_bolt: '🔩',
  link: '🔗', paperclip: '📎', pushpin: '📌', label: '🏷️', bookmark: '🔖', memo: '📝', pencil2: '✏️', clipboard: '📋',
  file_folder: '📁', open_file_folder: '📂', wastebasket: '🗑️', inbox_tray: '📥', outbox_tray: '📤', email: '📧', envelope: '✉️',
  incoming_envelope: '📨', mailbox: '📫', speech_balloon: '💬', mag: '🔍', globe_with_meridians: '🌐', chart_with_upwards_trend: '📈',
  chart_with_downwards_trend: '📉', bar_chart: '📊', bug: '🐛', moneybag: '💰', money_with_wings: '💸', dollar: '💵',
  credit_card: '💳', shopping_cart: '🛒', house: '🏠', office: '🏢', door: '🚪',
  // Weather and home
  sunny: '☀️', cloud: '☁️', partly_sunny: '⛅', umbrella: '☔', rain_cloud: '🌧️', snowflake: '❄️', thermometer: '🌡️',
  droplet: '💧', ocean: '🌊', tornado: '🌪️', rainbow: '🌈', earth_africa: '🌍', seedling: '🌱', leaves: '🍃',
  // Transport and animals
  car: '🚗', truck: '🚚', airplane: '✈️', ambulance: '🚑', police_car: '🚓', fire_engine: '🚒', bike: '🚲', ship: '🚢',
  cat: '🐱', dog: '🐶', bird: '🐦', bee: '🐝', coffee: '☕', beer: '🍺', pizza: '🍕', cake: '🍰',
};

/** The tags split as ntfy's clients show them: emoji (in order) and the remaining tags. */
export function splitTags(tags: string[]): { emojis: string[]; tags: string[] } {
  const emojis: string[] = [];
  const rest: string[] = [];
  for (const tag of tags) {
    const e = Object.hasOwn(EMOJI, tag.toLowerCase()) ? EMOJI[tag.toLowerCase()] : undefined;
    if (e) emojis.push(e);
    else rest.push(tag);
  }
  return { emojis, tags: rest };
}
